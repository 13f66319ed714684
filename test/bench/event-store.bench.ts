/**
 * Event append through the EventStore port vs a raw single-row INSERT on the same server
 * (goal: port ≥ 0.7× the raw insert rate). Run: npx tsx test/bench/event-store.bench.ts
 * against the PostgreSQL in DATABASE_URL. Rounds alternate so drift hits both sides alike.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure } from '../../src/infrastructure/database/migrate.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { fmt, median, scratchDatabase } from './bench-database.js'

const N = Number(process.env.BENCH_N ?? 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1)

const payload = (i: number) => ({ id: `org_${i}`, name: `Organization ${i}`, subdomain: `org-${i}`, roles: ['shipper'], currency: 'ARS' })
const metadata = () => ({ actor: { kind: 'admin' as const, id: 'bench' }, request_id: randomUUID(), occurred_at: new Date().toISOString() })

const scratch = await scratchDatabase('append')
const database = await openDatabase({ url: scratch.url, poolSize: CLIENTS + 2 })
await migrateInfrastructure(database.db)
const store = new PostgresEventStore(database.db)
const raw = new pg.Pool({ connectionString: scratch.url, max: CLIENTS })
await raw.query(`create table bench_raw (
  id bigint generated always as identity primary key, stream_id text not null, type text not null,
  data jsonb not null, metadata jsonb not null, recorded_at timestamptz not null default now())`)

/** Runs `op(i)` N times over CLIENTS concurrent workers; returns ops/s. */
async function rate(op: (i: number, worker: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const start = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CLIENTS }, async (_, worker) => {
    for (let i = next++; i < N; i = next++) await op(i, worker)
  }))
  return N / (Number(process.hrtime.bigint() - start) / 1e9)
}

let round = 0
const rawRates: number[] = []
const portRates: number[] = []
// Warm both paths (connections, plans) before measuring.
await raw.query(`insert into bench_raw (stream_id, type, data, metadata) values ('warm', 'Warm', '{}', '{}')`)
await store.append(`warm-${randomUUID()}`, [{ type: 'Warm', data: {}, metadata: metadata() }], 'no_stream')
for (; round < ROUNDS; round++) {
  rawRates.push(await rate((i) => raw.query(
    'insert into bench_raw (stream_id, type, data, metadata) values ($1, $2, $3, $4)',
    [`organization-${round}-${i}`, 'OrganizationCreated', JSON.stringify(payload(i)), JSON.stringify(metadata())],
  )))
  // A new stream per append half the time, an exact expected version the other half: what commands do.
  const perWorker = new Array<number>(CLIENTS).fill(0)
  portRates.push(await rate((i, worker) => {
    const k = perWorker[worker]!++
    const streamId = `organization-${round}-${worker}-${k >> 1}`
    return store.append(streamId, [{ type: 'OrganizationCreated', data: payload(i), metadata: metadata() }], k % 2 === 0 ? 'no_stream' : 1)
  }))
}

const r = median(rawRates)
const p = median(portRates)
process.stdout.write([
  `event append, ${N} ops × ${ROUNDS} rounds, ${CLIENTS} client(s), one event per append (median of rounds)`,
  `  baseline raw single-row INSERT : ${fmt(r)} ops/s   (rounds: ${rawRates.map((x) => fmt(x)).join(', ')})`,
  `  EventStore.append (port)       : ${fmt(p)} ops/s   (rounds: ${portRates.map((x) => fmt(x)).join(', ')})`,
  `  ratio port / raw               : ${fmt(p / r, 2)}×   (goal ≥ 0.70×) ${p / r >= 0.7 ? 'MET' : 'MISSED'}`,
  '',
].join('\n'))

await raw.end()
await database.close()
await scratch.drop()
