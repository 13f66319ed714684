/**
 * The witness round trip per checkpoint: a log (this process) grows its tree by BENCH_LEAVES leaves
 * per checkpoint and submits each checkpoint to a witness (`startWitness`, as `npm run witness`
 * runs it) over HTTP with keep-alive: add-checkpoint with its consistency proof; the witness checks
 * the log's note signature and the proof, cosigns, and syncs its state file before it answers. The
 * figure is that round trip (the time a head waits for one witness), p50/p99, and the cosignature checked.
 * Run: npx tsx test/bench/witness.bench.ts  (BENCH_CHECKPOINTS 300, BENCH_LEAVES 500)
 */
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cosignerVerifierKey, logVkey, signCheckpoint } from '../../src/audit/checkpoint-note.js'
import { CompactRange, consistencyRanges, hashLeaf, type NodeId, rangeHash } from '../../src/audit/merkle.js'
import { addCheckpoint } from '../../src/audit/witness/witness-client.js'
import { startWitness } from '../../src/audit/witness/witness-server.js'
import { fmt, percentile } from './bench-database.js'

const CHECKPOINTS = Number(process.env.BENCH_CHECKPOINTS ?? 300)
const LEAVES = Number(process.env.BENCH_LEAVES ?? 500)
const ORIGIN = 'bench.test/audit'
const out = (line: string) => process.stdout.write(`${line}\n`)

const log = generateKeyPairSync('ed25519')
const witnessKey = { name: 'bench.test/witness', privateKey: generateKeyPairSync('ed25519').privateKey }
const dir = mkdtempSync(join(tmpdir(), 'witness-bench-'))
const witness = await startWitness({ key: witnessKey, stateFile: join(dir, 'state.json'), logs: [logVkey(ORIGIN, log.publicKey)], port: 0 })
const endpoint = { url: witness.url, key: cosignerVerifierKey(witnessKey.name, createPublicKey(witnessKey.privateKey)) }

// The log's tree in memory: every completed subtree kept, as the notary stores them.
const nodes = new Map<string, Buffer>()
const keyOf = (n: NodeId) => `${n.level}/${n.index}`
const range = CompactRange.empty()
const hashOf = (n: NodeId) => nodes.get(keyOf(n))!

const times: number[] = []
let old = 0
for (let c = 0; c < CHECKPOINTS; c++) {
  for (let i = 0; i < LEAVES; i++) {
    const leaf = hashLeaf(Buffer.from(`event ${range.size}`))
    nodes.set(keyOf({ level: 0, index: range.size }), leaf)
    range.append(leaf, (node, hash) => nodes.set(keyOf(node), hash))
  }
  const size = range.size
  const proof = consistencyRanges(old, size).map((r) => rangeHash(r, hashOf))
  const note = signCheckpoint({ origin: ORIGIN, size, rootHash: range.root() }, log.privateKey)
  const t0 = performance.now()
  const answer = await addCheckpoint(endpoint, old, proof, note, 10_000)
  times.push(performance.now() - t0)
  if (answer.status !== 200) throw new Error(`checkpoint ${size}: ${JSON.stringify(answer)}`)
  old = size
}
await witness.close()
rmSync(dir, { recursive: true, force: true })
const sorted = [...times].sort((a, b) => a - b)
out(`witness round trip per checkpoint (${CHECKPOINTS} checkpoints, +${LEAVES} leaves each, to ${fmt(old)} leaves; proof ≤ ${Math.ceil(Math.log2(old))} hashes, state synced):`)
out(`  p50 ${fmt(percentile(sorted, 50), 2)} ms   p99 ${fmt(percentile(sorted, 99), 2)} ms   max ${fmt(sorted[sorted.length - 1]!, 2)} ms`)
