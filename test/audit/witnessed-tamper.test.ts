import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import t, { type Test } from 'tap'
import { cosignaturesBy, cosignerVerifierKey, logVkey, openCheckpoint, logVerifierKey } from '../../src/audit/checkpoint-note.js'
import { openKnownHead, storedTreeAgainst } from '../../src/audit/known-head.js'
import { parseNote } from '../../src/audit/signed-note.js'
import { publicKeyPem } from '../../src/audit/tree-head.js'
import { verifyHistory } from '../../src/audit/verify-history.js'
import { startWitness } from '../../src/audit/witness/witness-server.js'
import { Witnessing } from '../../src/audit/witness/witnessing.js'
import { build, type TestApp } from '../helpers/build.js'
import { spawnCli } from '../helpers/cli-process.js'
import { dbOf, deliveredShipment, eventCount, sealedToTheEnd, startTestNotary } from './fixtures.js'

// The attacker the witnesses exist for: someone who can write to the database (not the key). An
// edited event with the audit tables deleted or rolled back is re-sealed into a tree that gives no
// finding in the tables alone; the witness's kept checkpoint, and an auditor's, catch it.

const ORIGIN = 'shipping.test/audit'
const AUDIT_TABLES = ['audit_leaves', 'audit_tree_nodes', 'audit_tree_heads', 'audit_notary', 'audit_checkpoints']

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

async function witnessedLog(t: Test) {
  const h = await build(t, { auditOrigin: ORIGIN })
  const dir = mkdtempSync(join(tmpdir(), 'witnessed-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const key = { name: 'carrier.test/witness', privateKey: generateKeyPairSync('ed25519').privateKey }
  const witnessLines: string[] = []
  const witness = await startWitness({ key, stateFile: join(dir, 'witness.json'), logs: [logVkey(ORIGIN, h.platform.notaryKey.publicKey)], port: 0, log: (l) => witnessLines.push(l) })
  t.teardown(() => witness.close())
  const endpoint = { url: witness.url, key: cosignerVerifierKey(key.name, createPublicKey(key.privateKey)) }
  const witnessing = () => new Witnessing([endpoint], ORIGIN, h.platform.notaryKey)
  const first = witnessing()
  const notary = startTestNotary(t, h, { witnessing: first })
  const a = await deliveredShipment(t, h)
  const b = await deliveredShipment(t, h)
  await sealedToTheEnd(h)
  return { h, dir, witness, witnessLines, endpoint, witnessing, first, notary, a, b }
}

const headCount = async (h: TestApp) => (await sql<{ n: number }>`select count(*)::int as n from audit_tree_heads`.execute(dbOf(h))).rows[0]!.n
const editDelivered = (h: TestApp, stream: string) =>
  sql`update es_events set data = data || jsonb_build_object('status', 'returned') where stream_id = ${stream} and stream_version = 5`.execute(dbOf(h))

t.test('with a witness: every head is cosigned before it is signed, and /audit/v1/checkpoint carries the cosignature', async (t) => {
  const { h, witness, endpoint, first } = await witnessedLog(t)
  const n = await eventCount(h)
  t.equal(witness.state().logs[ORIGIN]!.size, n, 'the witness holds the latest size')
  t.equal(first.state.cosignedSize, n)
  const res = await h.call('GET', '/audit/v1/checkpoint')
  t.equal(res.statusCode, 200)
  const opened = openCheckpoint(res.body, logVerifierKey(ORIGIN, h.platform.notaryKey.publicKey))
  t.equal(opened.checkpoint.size, n)
  t.equal(cosignaturesBy(opened.note, endpoint.key).length, 1, 'the witness\'s cosignature verifies over it')
  const stored = (await sql<{ n: number }>`select count(*)::int as n from audit_checkpoints`.execute(dbOf(h))).rows[0]!.n
  t.equal(stored, await headCount(h), 'a cosigned checkpoint beside each head')
})

t.test('an event edited, the audit tables deleted: the notary refuses, the witness refuses, --known-head names the rewrite', async (t) => {
  const { h, dir, witness, witnessLines, witnessing, first, notary, a } = await witnessedLog(t)
  const kept = (await h.call('GET', '/audit/v1/checkpoint')).body
  const knownFile = join(dir, 'known.checkpoint')
  writeFileSync(knownFile, kept)
  const n = witness.state().logs[ORIGIN]!.size

  await editDelivered(h, a.stream)
  for (const table of AUDIT_TABLES) await sql`delete from ${sql.table(table)}`.execute(dbOf(h))

  // The running notary re-seals the forged log from scratch, and will not sign it.
  const refusal = await until('the notary to refuse', () => first.state.refused)
  t.match(refusal, new RegExp(`the stored tree at size ${n} is not the checkpoint the witnesses cosigned`))
  t.equal(await headCount(h), 0, 'no head was signed over the forged tree')
  await notary.stop()

  // A new notary process, nothing in memory, the log grown: the witness's 409 tells it the size it
  // cosigned, and refuses the proof from there (422).
  await deliveredShipment(t, h)
  const fresh = witnessing()
  const second = startTestNotary(t, h, { witnessing: fresh })
  const why = await until('the fresh notary to refuse', () => fresh.state.refused)
  t.match(why, new RegExp(`refuses \\(422\\): this tree of \\d+ does not extend the checkpoint it cosigned at size ${n}`))
  t.ok(witnessLines.some((l) => l.startsWith('refused (409)')), 'the witness answered 409 with its size first')
  t.ok(witnessLines.some((l) => l.startsWith(`refused (422): the checkpoint of size`)), 'then 422')
  t.equal(witness.state().logs[ORIGIN]!.size, n, 'the witness still holds its checkpoint')
  t.equal(await headCount(h), 0)
  await second.stop()

  // Where no witness is configured a notary does sign the forged tree, and the history verifies on
  // its own; the checkpoint a counter-party kept does not let it pass.
  startTestNotary(t, h)
  await sealedToTheEnd(h)
  const history = await h.call('GET', `/api/v1/shipments/${a.id}/events?proof=true`, { token: a.token })
  t.ok(verifyHistory(history.json(), h.platform.notaryKey.publicKey).ok, 'alone, the forged history verifies')
  const historyFile = join(dir, 'history.json')
  writeFileSync(historyFile, history.body)
  const keyFile = join(dir, 'notary.pem')
  writeFileSync(keyFile, publicKeyPem(h.platform.notaryKey.publicKey))
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const address = h.app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const cli = spawnCli('src/cli/verify-history.ts', [historyFile, '--public-key', keyFile, '--known-head', knownFile, '--log', url])
  t.equal(await cli.exited, 1, cli.stderr())
  t.match(cli.stdout(), new RegExp(`FAIL known head ${knownFile}: the tree of \\d+ leaves does not extend the checkpoint of ${n} kept .*the log was rewritten`))
  const plain = spawnCli('src/cli/verify-history.ts', [historyFile, '--public-key', keyFile])
  t.equal(await plain.exited, 0, 'without it: OK')

  // audit-log check --known-heads: the stored tree against the kept checkpoint.
  const problems = await storedTreeAgainst(dbOf(h), [openKnownHead(kept, h.platform.notaryKey.publicKey)])
  t.equal(problems.length, 1)
  t.match(problems[0]!.problem, new RegExp(`two signed trees of ${n} leaves with different roots`))
})

t.test('the audit tables rolled back to an earlier leaf after an edit: the notary and the witness refuse', async (t) => {
  const { h, witness, witnessing, first, notary, b } = await witnessedLog(t)
  for (const table of AUDIT_TABLES) await sql`create table ${sql.table(`bak_${table}`)} as select * from ${sql.table(table)}`.execute(dbOf(h))
  const before = witness.state().logs[ORIGIN]!.size
  const c = await deliveredShipment(t, h)
  const n = await sealedToTheEnd(h)
  t.ok(n > before)
  t.equal(witness.state().logs[ORIGIN]!.size, n)

  await editDelivered(h, c.stream)
  for (const table of AUDIT_TABLES) {
    await sql`delete from ${sql.table(table)}`.execute(dbOf(h))
    await sql`insert into ${sql.table(table)} select * from ${sql.table(`bak_${table}`)}`.execute(dbOf(h))
  }
  const refusal = await until('the notary to refuse', () => first.state.refused)
  t.match(refusal, new RegExp(`not the checkpoint the witnesses cosigned|fewer than the ${n}`))
  await notary.stop()

  const fresh = witnessing()
  startTestNotary(t, h, { witnessing: fresh })
  const why = await until('the fresh notary to refuse', () => fresh.state.refused)
  t.match(why, new RegExp(`cosigned another root at size ${n}|does not extend the checkpoint it cosigned at size ${n}`))
  t.equal(witness.state().logs[ORIGIN]!.size, n, 'the witness kept its checkpoint')
  const latest = (await sql<{ n: number }>`select coalesce(max(tree_size), 0)::int as n from audit_tree_heads`.execute(dbOf(h))).rows[0]!.n
  t.equal(latest, before, 'nothing was signed past the rolled-back head')
  t.ok(b)
})
