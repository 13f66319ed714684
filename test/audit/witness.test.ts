import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { cosignaturesBy, cosignerVerifierKey, logVkey, signCheckpoint } from '../../src/audit/checkpoint-note.js'
import { consistencyRanges, hashLeaf, rangeHash, rootOf } from '../../src/audit/merkle.js'
import { parseNote } from '../../src/audit/signed-note.js'
import { addCheckpoint, parseWitnesses, type WitnessEndpoint } from '../../src/audit/witness/witness-client.js'
import { startWitness } from '../../src/audit/witness/witness-server.js'

// The witness as a log (any tlog-witness client) meets it over HTTP: every answer of C2SP
// tlog-witness's add-checkpoint, its state kept across a restart, and the cosignature it returns.

const ORIGIN = 'shipping.test/audit'
const log = generateKeyPairSync('ed25519')
const leaves = Array.from({ length: 40 }, (_, i) => hashLeaf(Buffer.from(`event ${i}`)))
const forged = leaves.map((l, i) => (i === 5 ? hashLeaf(Buffer.from('event 5, returned')) : l))
const rootAt = (ls: Buffer[], n: number) => rootOf(ls.slice(0, n))
const proof = (ls: Buffer[], from: number, to: number) => consistencyRanges(from, to).map((r) => rootOf(ls.slice(r.begin, r.end)))
const note = (ls: Buffer[], n: number, key = log.privateKey, origin = ORIGIN) => signCheckpoint({ origin, size: n, rootHash: rootAt(ls, n) }, key)

async function witnessFor(t: Test, dir = mkdtempSync(join(tmpdir(), 'witness-'))) {
  const key = { name: 'witness.test/w1', privateKey: generateKeyPairSync('ed25519').privateKey }
  const lines: string[] = []
  const server = await startWitness({ key, stateFile: join(dir, 'state.json'), logs: [logVkey(ORIGIN, log.publicKey)], port: 0, log: (l) => lines.push(l) })
  t.teardown(() => server.close())
  const endpoint: WitnessEndpoint = { url: server.url, key: cosignerVerifierKey(key.name, createPublicKey(key.privateKey)) }
  return { server, endpoint, lines, dir, key }
}

t.test('rangeHash agrees with rootOf for the proofs built here', async (t) => {
  t.same(rangeHash({ begin: 0, end: 40 }, (n) => rootOf(leaves.slice(n.index * 2 ** n.level, (n.index + 1) * 2 ** n.level))), rootOf(leaves))
})

t.test('add-checkpoint: cosigns what extends the last cosigned checkpoint, answers every other case as tlog-witness says', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'witness-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { server, endpoint, lines } = await witnessFor(t, dir)

  const first = await addCheckpoint(endpoint, 0, [], note(leaves, 10), 5000)
  t.equal(first.status, 200, 'the first checkpoint, from size 0')
  t.ok('cosignature' in first && cosignaturesBy(parseNote(note(leaves, 10) + first.cosignature), endpoint.key).length === 1, 'a cosignature/v1 of its key over it')
  t.equal(server.state().logs[ORIGIN]!.size, 10)

  const conflict = await fetch(`${server.url}/add-checkpoint`, { method: 'POST', body: `old 0\n\n${note(leaves, 20)}` })
  t.equal(conflict.status, 409, 'an old size that is not its size')
  t.equal(conflict.headers.get('content-type'), 'text/x.tlog.size')
  t.equal(await conflict.text(), '10\n', 'with the size it cosigned')

  t.equal((await addCheckpoint(endpoint, 10, proof(leaves, 10, 20), note(leaves, 20), 5000)).status, 200, 'from 10 to 20 with its proof')
  t.equal((await addCheckpoint(endpoint, 20, [], note(leaves, 20), 5000)).status, 200, 'the same checkpoint again')

  const splitView = await addCheckpoint(endpoint, 20, [], note(forged, 20), 5000)
  t.same(splitView, { status: 409, knownSize: 20 }, 'another root at its size: 409')
  const rewritten = await addCheckpoint(endpoint, 20, proof(forged, 20, 30), note(forged, 30), 5000)
  t.equal(rewritten.status, 422, 'a tree that does not extend it: 422')
  t.equal((await addCheckpoint(endpoint, 20, proof(leaves, 20, 30).slice(1), note(leaves, 30), 5000)).status, 422, 'a truncated proof: 422')
  t.equal((await addCheckpoint(endpoint, 30, [], note(leaves, 20), 5000)).status, 400, 'an old size above the checkpoint\'s: 400')
  const stranger = generateKeyPairSync('ed25519').privateKey
  t.equal((await addCheckpoint(endpoint, 20, proof(leaves, 20, 30), note(leaves, 30, stranger), 5000)).status, 403, 'signed by another key: 403')
  t.equal((await addCheckpoint(endpoint, 0, [], note(leaves, 30, log.privateKey, 'other.test/log'), 5000)).status, 404, 'a log it does not witness: 404')
  t.equal(server.state().logs[ORIGIN]!.size, 20, 'none of them moved it')
  t.ok(lines.some((l) => /^refused \(422\): the checkpoint of size 30 does not extend the one cosigned at size 20/.test(l)), 'the refusal is logged')

  // Restarted on its state file: it still holds 20 and its root.
  await server.close()
  const again = await witnessFor(t, dir)
  t.same(await addCheckpoint(again.endpoint, 0, [], note(forged, 25), 5000), { status: 409, knownSize: 20 }, 'after a restart it still knows its size')
  t.equal((await addCheckpoint(again.endpoint, 20, proof(forged, 20, 25), note(forged, 25), 5000)).status, 422, 'and its root')
})

t.test('AUDIT_WITNESSES: <vkey>@<url>, comma-separated; a bad entry is named', async (t) => {
  const key = { name: 'w.test/a', privateKey: generateKeyPairSync('ed25519').privateKey }
  const vkey = cosignerVerifierKey(key.name, createPublicKey(key.privateKey))
  const { cosignerVkey } = await import('../../src/audit/checkpoint-note.js')
  const parsed = parseWitnesses(`${cosignerVkey(key)}@https://w.test/, ${cosignerVkey(key)}@http://127.0.0.1:4100`)
  t.same(parsed.map((w) => [w.url, w.key.hash]), [['https://w.test', vkey.hash], ['http://127.0.0.1:4100', vkey.hash]])
  t.same(parseWitnesses(''), [])
  t.throws(() => parseWitnesses('https://w.test'), /not <witness vkey>@<url>/)
  t.throws(() => parseWitnesses(`${logVkey(ORIGIN, log.publicKey)}@https://w.test`), /the key of/, 'a log key (0x01) is no cosigner key')
})
