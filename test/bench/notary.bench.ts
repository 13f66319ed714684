/**
 * The notary's figures, each beside the projector's in the same run:
 *  1. sealing rate (events/s into the audit tree) against the projection rebuild rate of the same
 *     log (goal: sealing ≥ rebuild);
 *  2. the notary's lag at 500 appends/s (commit → leaf sealed), p99 goal ≤ 1 s;
 *  3. an inclusion proof at 1 M and 10 M leaves (leaf hashes generated in SQL): p99 goal ≤ 5 ms,
 *     ⌈log2 n⌉ hashes; and the storage per event.
 * Run: bash test/bench/run-all.sh notary (or npx tsx test/bench/notary.bench.ts with DATABASE_URL).
 * BENCH_ORGS (20,000 → ~100 k events), BENCH_LAG_SECONDS (20), BENCH_PROOF_SIZES (1000000,10000000).
 */
import { type Kysely, sql } from 'kysely'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { readingThrough } from '../../src/infrastructure/event-store/read-through.js'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { Notary } from '../../src/audit/notary.js'
import { notaryKeyFrom } from '../../src/audit/tree-head.js'
import { hashLeaf, rootOf } from '../../src/audit/merkle.js'
import { verifyInclusion } from '../../src/audit/merkle-verify.js'
import { inclusionProofs, rootAt } from '../../src/audit/proofs.js'
import { fmt, median, percentile, scratchDatabase } from './bench-database.js'
import { writeOrganizationLog } from './organization-log.js'

const ORGS = Number(process.env.BENCH_ORGS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const LAG_SECONDS = Number(process.env.BENCH_LAG_SECONDS ?? 20)
const RATE = 500
const PROOF_SIZES = (process.env.BENCH_PROOF_SIZES ?? '1000000,10000000').split(',').map(Number)
const PROOFS = 2000
const key = notaryKeyFrom(Buffer.alloc(32, 3).toString('base64'))
const out = (line: string) => process.stdout.write(`${line}\n`)
const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9

const resetTree = (db: Kysely<any>) => sql`truncate audit_leaves, audit_tree_nodes, audit_tree_heads, audit_notary, audit_stream_tips, audit_map_nodes, audit_map_heads`.execute(db)
const auditBytes = async (db: Kysely<any>) => Number((await sql<{ b: string }>`
  select (pg_total_relation_size('audit_leaves') + pg_total_relation_size('audit_tree_nodes'))::text as b`.execute(db)).rows[0]!.b)

// 1. Sealing against rebuilding, on one log.
const scratch = await scratchDatabase('notary')
const database = await openDatabase({ url: scratch.url, poolSize: 6 })
await migrateInfrastructure(database.db)
await migrateReadModels(database.db)
const store = new PostgresEventStore(database.db)
// The notary reads as the platform's does: as stored, with each event's stored form (leaf version 2).
const asStored = readingThrough(store, database.db, { asStored: true })
const total = await writeOrganizationLog(database.db, ORGS)
const sealRates: number[] = []
const rebuildRates: number[] = []
for (let round = -1; round < ROUNDS; round++) {
  await resetTree(database.db)
  const notary = new Notary(database.db, asStored, key, { signEveryEvents: 100_000 })
  const t0 = process.hrtime.bigint()
  while ((await notary.step()) === 'more') { /* to the end of the log */ }
  const sealRate = total / seconds(t0)
  if (notary.treeSize !== total) throw new Error(`sealed ${notary.treeSize} of ${total}`)
  await notary.stop()
  const r = await rebuildReadModels({ database, store })
  if (round < 0) continue
  sealRates.push(sealRate)
  rebuildRates.push(r.eventsPerSecond)
}
const sealed = median(sealRates)
const rebuilt = median(rebuildRates)
const perEvent = await auditBytes(database.db) / total
out(`notary, ${fmt(total)} events (organizations, tokens, places, contracts), each at its default batch (notary 5,000, rebuild 10,000), median of ${ROUNDS} after a warm-up round`)
out(`  projection rebuild (the projector, same log)   : ${fmt(rebuilt)} events/s   (rounds: ${rebuildRates.map((x) => fmt(x)).join(', ')})`)
out(`  sealing (read as stored, hash, store, sign)    : ${fmt(sealed)} events/s   (rounds: ${sealRates.map((x) => fmt(x)).join(', ')})`)
out(`  goal sealing ≥ rebuild                         : ${sealed >= rebuilt ? 'MET' : 'MISSED'} (${fmt(sealed / rebuilt, 2)}×)`)
out(`  storage per event (leaves + subtrees, with indexes): ${fmt(perEvent)} bytes`)

// 2. Lag at 500 appends/s, each append its own command (one event, its own stream).
const lags: number[] = []
const notary = new Notary(database.db, asStored, key, {
  onSealed: (events) => { const now = Date.now(); for (const e of events) if (e.streamId.startsWith('lag-')) lags.push(now - e.recordedAt.getTime()) },
})
notary.start()
while (!notary.isActive) await new Promise((r) => setTimeout(r, 10))
const appends: Promise<unknown>[] = []
const started = Date.now()
let sent = 0
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const due = Math.min(RATE * LAG_SECONDS, Math.floor(((Date.now() - started) / 1000) * RATE))
    for (; sent < due; sent++) {
      appends.push(store.append(`lag-${sent}`, [{ type: 'LagProbe', data: { n: sent }, metadata: { actor: { kind: 'system', id: 'bench' }, occurred_at: new Date().toISOString() } }], 'no_stream'))
    }
    if (sent >= RATE * LAG_SECONDS) { clearInterval(tick); resolve() }
  }, 5)
})
await Promise.all(appends)
const offered = sent / ((Date.now() - started) / 1000)
while (lags.length < sent) await new Promise((r) => setTimeout(r, 20))
await notary.stop()
const sortedLags = [...lags].sort((a, b) => a - b)
out(`  lag at ${RATE} appends/s for ${LAG_SECONDS} s (${fmt(offered)}/s achieved), commit → sealed: p50 ${fmt(percentile(sortedLags, 50))} ms, p99 ${fmt(percentile(sortedLags, 99))} ms, max ${fmt(sortedLags[sortedLags.length - 1]!)} ms`)
out(`  goal p99 ≤ 1 s                                 : ${percentile(sortedLags, 99) <= 1000 ? 'MET' : 'MISSED'} (a signed head follows within NOTARY_SIGN_INTERVAL_MS, or at once for a proof request)`)
await database.close()
await scratch.drop()

// 3. Inclusion proofs in big trees: leaf hashes generated in SQL, every complete subtree built level by level.
const big = await scratchDatabase('proofs')
const proofDb = await openDatabase({ url: big.url, poolSize: 4 })
await migrateInfrastructure(proofDb.db)
const leafInput = (i: number) => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(i)); return b }
async function grow(db: Kysely<any>, from: number, to: number): Promise<void> {
  for (let at = from; at < to; at += 1_000_000) {
    const end = Math.min(to, at + 1_000_000)
    await sql`insert into audit_leaves (leaf_index, event_id, stream_id, stream_version, leaf_hash)
      select i, md5(i::text)::uuid, 'shipment-' || (i / 6), i % 6 + 1, sha256('\\x00'::bytea || int8send(i))
      from generate_series(${at}::bigint, ${end - 1}::bigint) i`.execute(db)
  }
  for (let level = 1; 2 ** level <= to; level++) {
    const lo = Math.floor(from / 2 ** level)
    const hi = Math.floor(to / 2 ** level)
    if (hi <= lo) continue
    if (level === 1) {
      await sql`insert into audit_tree_nodes (level, node_index, hash)
        select 1, l.leaf_index / 2, sha256('\\x01'::bytea || l.leaf_hash || r.leaf_hash)
        from audit_leaves l join audit_leaves r on r.leaf_index = l.leaf_index + 1
        where l.leaf_index % 2 = 0 and l.leaf_index >= ${lo * 2} and l.leaf_index < ${hi * 2}`.execute(db)
    } else {
      await sql`insert into audit_tree_nodes (level, node_index, hash)
        select ${level}, l.node_index / 2, sha256('\\x01'::bytea || l.hash || r.hash)
        from audit_tree_nodes l join audit_tree_nodes r on r.level = l.level and r.node_index = l.node_index + 1
        where l.level = ${level - 1} and l.node_index % 2 = 0 and l.node_index >= ${lo * 2} and l.node_index < ${hi * 2}`.execute(db)
    }
  }
  // Settled before measuring: autovacuum would otherwise visit the fresh rows during the run.
  await sql`vacuum analyze audit_leaves`.execute(db)
  await sql`vacuum analyze audit_tree_nodes`.execute(db)
}
let grown = 0
for (const n of PROOF_SIZES) {
  const t0 = process.hrtime.bigint()
  await grow(proofDb.db, grown, n)
  const built = seconds(t0)
  grown = n
  const root = await rootAt(proofDb.db, n)
  if (n <= 1_000_000) {
    const expected = rootOf(Array.from({ length: n }, (_, i) => hashLeaf(leafInput(i))))
    if (!expected.equals(root)) throw new Error('the SQL-built tree disagrees with the Merkle code')
  }
  const times: number[] = []
  const floor: number[] = []
  let longest = 0
  for (let k = -200; k < PROOFS; k++) {
    // The machine's floor beside it: one round trip of the same pool that reads nothing.
    const b0 = process.hrtime.bigint()
    await sql`select 1`.execute(proofDb.db)
    if (k >= 0) floor.push(Number(process.hrtime.bigint() - b0) / 1e6)
    const i = Math.floor(Math.random() * n)
    const p0 = process.hrtime.bigint()
    const [path] = await inclusionProofs(proofDb.db, [i], n)
    const ms = Number(process.hrtime.bigint() - p0) / 1e6
    if (verifyInclusion(i, n, hashLeaf(leafInput(i)), path!, root) !== undefined) throw new Error(`proof of ${i} in ${n} does not hold`)
    longest = Math.max(longest, path!.length)
    if (k >= 0) times.push(ms)
  }
  times.sort((a, b) => a - b)
  floor.sort((a, b) => a - b)
  out(`inclusion proof at ${fmt(n)} leaves (tree built in SQL in ${fmt(built, 1)} s; ${PROOFS} random leaves, one query each, after 200 warm-up):`)
  out(`  p50 ${fmt(percentile(times, 50), 2)} ms, p99 ${fmt(percentile(times, 99), 2)} ms, max ${fmt(times[times.length - 1]!, 2)} ms; proof size ≤ ${longest} hashes (⌈log2 n⌉ = ${Math.ceil(Math.log2(n))}); every proof verified`)
  out(`  baseline \`select 1\` on the same pool, interleaved: p50 ${fmt(percentile(floor, 50), 2)} ms, p99 ${fmt(percentile(floor, 99), 2)} ms`)
  out(`  goal p99 ≤ 5 ms                                : ${percentile(times, 99) <= 5 ? 'MET' : 'MISSED'}`)
  out(`  storage per event (leaves + subtrees, with indexes): ${fmt(await auditBytes(proofDb.db) / n)} bytes`)
}
await proofDb.close()
await big.drop()
