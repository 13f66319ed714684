import { createPublicKey } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { sql } from 'kysely'
import t from 'tap'
import { verifyConsistency } from '../../src/audit/merkle-verify.js'
import { publicKeyFrom, treeHeadSignatureHolds } from '../../src/audit/tree-head.js'
import { verifyHistory } from '../../src/audit/verify-history.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { build, TEST_NOTARY_KEY } from '../helpers/build.js'
import { routesWorld } from '../routes/fixtures.js'
import { workflowsWorld } from '../workflows/fixtures.js'
import { dbOf, deliveredShipment, sealedToTheEnd, startTestNotary } from './fixtures.js'

const b64 = (s: string) => Buffer.from(s, 'base64')

t.test('the public key, signed tree heads and consistency proofs, without credentials', async (t) => {
  const h = await build(t)
  t.equal((await h.call('GET', '/audit/v1/tree-heads/latest')).statusCode, 404, 'no head before the notary ran')
  const keyRes = await h.call('GET', '/audit/v1/public-key')
  t.equal(keyRes.statusCode, 200)
  const key = keyRes.json()
  t.equal(key.algorithm, 'Ed25519')
  t.same(createPublicKey(key.pem).export({ format: 'der', type: 'spki' }), h.platform.notaryKey.publicKey.export({ format: 'der', type: 'spki' }), 'its PEM is the notary\'s public key')
  t.same(publicKeyFrom(key.public_key).export({ format: 'der', type: 'spki' }), publicKeyFrom(key.pem).export({ format: 'der', type: 'spki' }), 'the raw key is the same key')
  const publicKey = publicKeyFrom(keyRes.body)

  startTestNotary(t, h, { signEveryEvents: 4 })
  await deliveredShipment(t, h)
  const size = await sealedToTheEnd(h)
  const latest = (await h.call('GET', '/audit/v1/tree-heads/latest')).json()
  t.equal(latest.tree_size, size)
  t.equal(latest.signed_at, new Date(latest.timestamp).toISOString())
  t.ok(treeHeadSignatureHolds({ treeSize: latest.tree_size, rootHash: b64(latest.root_hash), timestamp: latest.timestamp }, b64(latest.signature), publicKey), 'its signature holds under the served key')

  const sizes = (await sql<{ tree_size: number }>`select tree_size::int from audit_tree_heads order by tree_size`.execute(dbOf(h))).rows.map((r) => r.tree_size)
  t.ok(sizes.length >= 2)
  const older = (await h.call('GET', `/audit/v1/tree-heads/${sizes[1]}`)).json()
  t.equal(older.tree_size, sizes[1])
  const proof = await h.call('GET', `/audit/v1/consistency?from=${older.tree_size}&to=${latest.tree_size}`)
  t.equal(proof.statusCode, 200, proof.body)
  const p = proof.json()
  t.same([p.from_head.root_hash, p.to_head.root_hash], [older.root_hash, latest.root_hash])
  t.equal(verifyConsistency(older.tree_size, latest.tree_size, p.consistency_path.map(b64), b64(older.root_hash), b64(latest.root_hash)), undefined, 'the older head is a prefix of the latest')
  t.equal((await h.call('GET', `/audit/v1/consistency?from=0&to=${latest.tree_size}`)).json().consistency_path.length, 0)

  // Bad input: 422 naming the parameter; a size never signed is unknown.
  const unsigned = [...Array(size).keys()].find((n) => !sizes.includes(n))
  if (unsigned !== undefined) t.equal((await h.call('GET', `/audit/v1/tree-heads/${unsigned}`)).statusCode, 404, 'no head was signed at that size')
  const refused: [string, string][] = [
    [`/audit/v1/tree-heads/${size + 1}`, 'size'],
    ['/audit/v1/tree-heads/abc', 'size'],
    ['/audit/v1/tree-heads/-1', 'size'],
    [`/audit/v1/consistency?from=${size}&to=1`, 'from'],
    [`/audit/v1/consistency?from=1&to=${size + 5}`, 'to'],
    ['/audit/v1/consistency?from=x&to=1', 'from'],
    ['/audit/v1/consistency?from=1', 'to'],
  ]
  for (const [url, param] of refused) {
    const res = await h.call('GET', url)
    t.equal(res.statusCode, 422, `${url}: ${res.body}`)
    t.ok(res.json().errors?.[param]?.length, `${url} names ${param}`)
  }

  // Sizes in canonical decimal only: another spelling of a number (hex, exponent, sign, leading
  // zeros, spaces, a fraction) is refused as such, not read as the number it might mean.
  const spellings = ['0x10', '0x1', '1e3', '1e0', '%20', '%201', '1%20', '0060', '01', '00', '+1', '-0', '1.0', '']
  for (const bad of spellings) {
    const cases: [string, string[]][] = [
      [`/audit/v1/tree-heads/${bad}`, ['size']],
      [`/audit/v1/consistency?from=0&to=${bad}`, ['to']],
      [`/audit/v1/consistency?from=${bad}&to=${size}`, ['from']],
      [`/audit/v1/consistency?from=${bad}&to=${bad}`, ['from', 'to']],
    ]
    for (const [url, params] of cases) {
      if (bad === '' && url.includes('tree-heads')) continue // `/tree-heads/` is another path
      const res = await h.call('GET', url)
      t.equal(res.statusCode, 422, `${url}: ${res.body}`)
      t.same(Object.keys(res.json().errors ?? {}).sort(), params, `${url} names ${params.join(' and ')}`)
      for (const p of params) t.match(res.json().errors?.[p]?.[0], /decimal digits/, `${url}: ${p} is refused for its spelling`)
    }
  }
  t.equal((await h.call('GET', `/audit/v1/tree-heads/${sizes[0]}`)).statusCode, 200, 'the canonical spelling is served')
  t.equal((await h.call('GET', `/audit/v1/consistency?from=0&to=${sizes[0]}`)).statusCode, 200)
})

t.test('?proof=true on the task, workflow and route histories verifies offline; another tenant gets 404; a bad flag 422', async (t) => {
  const h = await build(t)
  startTestNotary(t, h)
  const w = await workflowsWorld(h)
  const r = await routesWorld(h)
  const task = await w.task()
  t.equal((await w.transition(task.ulid, 'cancel', { reason: 'not needed' })).statusCode, 200)
  const workflow = await w.started()
  const route = await r.route()
  const stranger = await h.createOrganization({ roles: ['carrier', 'shipper'] })
  const shipment = await deliveredShipment(t, h)
  await sealedToTheEnd(h)

  const histories: [string, string, string][] = [
    [`/api/v1/tasks/${task.ulid}/events`, w.carrier.token, `task-${task.ulid}`],
    [`/api/v1/workflows/${workflow.id}/events`, w.carrier.token, `workflow-${workflow.id}`],
    [`/api/v1/routes/${route.id}/events`, r.carrier.token, `route-${route.id}`],
    [`/api/v1/shipments/${shipment.id}/events`, shipment.token, shipment.stream],
  ]
  for (const [url, token, stream] of histories) {
    const plain = await h.call('GET', url, { token })
    t.equal(plain.statusCode, 200, plain.body)
    t.notOk('tree_head' in plain.json() || plain.json().events.some((e: object) => 'proof' in e), `${url}: no proofs unless asked`)
    const res = await h.call('GET', `${url}?proof=true`, { token })
    t.equal(res.statusCode, 200, res.body)
    const doc = res.json()
    t.equal(doc.stream_id, stream)
    t.same(doc.events.map((e: any) => e.type), plain.json().events.map((e: any) => e.type), 'the same history')
    const v = verifyHistory(doc, h.platform.notaryKey.publicKey)
    t.same(v.findings, [], `${url}: verified offline`)
    t.equal(v.verified, doc.events.length)
    t.ok(doc.events.every((e: any) => e.proof.audit_path.length <= Math.ceil(Math.log2(doc.tree_head.tree_size))), 'proofs of ⌈log2 n⌉ hashes at most')

    t.equal((await h.call('GET', `${url}?proof=true`, { token: stranger.token })).statusCode, 404, `${url}: another organization's record is unknown`)
    const bad = await h.call('GET', `${url}?proof=maybe`, { token })
    t.equal(bad.statusCode, 422)
    t.ok(bad.json().errors?.proof, 'names proof')
  }
})

t.test('the signing key never appears in a response, an event, a log line or /metrics', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done() } })
  const h = await build(t, {}, {}, { logger: { level: 'trace', stream } })
  const notary = startTestNotary(t, h, { logger: { info: (o, m) => h.app.log.info(o, m), warn: (o, m) => h.app.log.warn(o, m), error: (o, m) => h.app.log.error(o, m) } })
  const shipment = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  t.ok(notary.isActive)
  const bodies: string[] = []
  for (const url of ['/audit/v1/public-key', '/audit/v1/tree-heads/latest', '/audit/v1/consistency?from=1&to=2', '/audit/v1/tree-heads/abc', '/metrics', '/health']) bodies.push((await h.call('GET', url)).body)
  bodies.push((await h.call('GET', `/api/v1/shipments/${shipment.id}/events?proof=true`, { token: shipment.token })).body)
  const events = (await sql<{ e: string }>`select row_to_json(es_events)::text as e from es_events`.execute(dbOf(h))).rows.map((r) => r.e)
  const pkcs8 = h.platform.notaryKey.privateKey.export({ format: 'der', type: 'pkcs8' }) as Buffer
  const seed = pkcs8.subarray(pkcs8.length - 32)
  t.equal(seed.toString('base64'), TEST_NOTARY_KEY, 'the key under test')
  const secretForms = [seed.toString('base64'), seed.toString('hex'), seed.toString('base64url'), pkcs8.toString('base64').slice(20, 60)]
  const everything = [...bodies, ...events, ...lines].join('\n')
  t.ok(lines.length > 10, 'the requests were logged')
  for (const form of secretForms) t.notOk(everything.includes(form), `no ${form.length}-character form of the key`)
  t.equal(JSON.stringify(h.platform.notaryKey.privateKey), '{}', 'the key object serialises as nothing')

  // NOTARY_KEY_FILE (a Docker secret): the configuration reads it as NOTARY_KEY.
  const dir = mkdtempSync(join(tmpdir(), 'notary-key-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const pem = h.platform.notaryKey.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString()
  writeFileSync(join(dir, 'notary_key'), pem)
  t.equal(loadConfig({ NOTARY_KEY_FILE: join(dir, 'notary_key') }).notaryKey, pem.trim(), 'NOTARY_KEY_FILE gives NOTARY_KEY')

  // A malformed key is refused at start, described but never quoted.
  const secretish = 'not-a-key-but-secret-material-XYZ'
  t.throws(() => loadConfig({ NOTARY_KEY: secretish }), ConfigError)
  try { loadConfig({ NOTARY_KEY: secretish }) } catch (err) {
    t.match((err as Error).message, /NOTARY_KEY must be an Ed25519 private key/)
    t.notOk((err as Error).message.includes(secretish), 'the value is not in the message')
  }
})
