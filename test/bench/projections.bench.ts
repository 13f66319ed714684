/**
 * Projection lag at a steady 500 events/s (goal p99 ≤ 10 ms): each event is appended through the
 * port (one OrganizationCreated per new stream, open loop, not waiting for the previous one), and
 * its lag is the time from the append's commit to every projection having passed its position
 * (ProjectionRunner.waitFor, which resolves after the projection's transaction committed).
 * The appenders (standing in for API processes) and the projector have separate pools, and the
 * projector is woken by LISTEN/NOTIFY, as between processes.
 * Baseline in the same run: the latency of a bare single-row INSERT commit on the same server.
 * Run: npx tsx test/bench/projections.bench.ts against the PostgreSQL in DATABASE_URL.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { allProjections } from '../../projections/index.js'
import { ProjectionRunner } from '../../projections/runner.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure, migrateReadModels } from '../../src/infrastructure/database/migrate.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { fmt, percentile, scratchDatabase } from './bench-database.js'

const RATE = Number(process.env.BENCH_RATE ?? 500)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const N = RATE * SECONDS

const scratch = await scratchDatabase('lag')
const database = await openDatabase({ url: scratch.url, poolSize: 20 })
await migrateInfrastructure(database.db)
await migrateReadModels(database.db)
const store = new PostgresEventStore(database.db)
const projector = await openDatabase({ url: scratch.url, poolSize: 4 })
const projectorStore = new PostgresEventStore(projector.db)
await projectorStore.listenWith(projector.listen)
const runner = new ProjectionRunner(projector.db, projectorStore, allProjections, { pollMs: 1000 })
await runner.start()

const ms = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e6
const sleepUntil = (t: bigint) => new Promise((r) => setTimeout(r, Math.max(0, Number(t - process.hrtime.bigint()) / 1e6)))

/** Runs `one(i)` RATE times a second for SECONDS, open loop; collects what it returns. */
async function paced(one: (i: number) => Promise<number>): Promise<{ samples: number[]; achieved: number }> {
  const pending: Promise<number>[] = []
  const start = process.hrtime.bigint()
  const interval = BigInt(Math.round(1e9 / RATE))
  for (let i = 0; i < N; i++) {
    await sleepUntil(start + interval * BigInt(i))
    pending.push(one(i))
  }
  const samples = await Promise.all(pending)
  return { samples: samples.sort((a, b) => a - b), achieved: N / (ms(start) / 1000) }
}

const meta = () => ({ actor: { kind: 'admin' as const, id: 'bench' }, request_id: randomUUID(), occurred_at: new Date().toISOString() })
const created = (i: number) => ({
  id: `org_lag${i}`, internal_id: i + 1, name: `Organization ${i}`, subdomain: `lag-${i}`, roles: ['shipper'], currency: 'ARS',
  locale: 'es-AR', timezone: 'America/Argentina/Buenos_Aires', market: null, carriers_enabled: false, created_at: new Date().toISOString(),
})

// Warm-up (not counted): plans, connections, JIT.
for (let i = 0; i < 200; i++) {
  const r = await store.append(`organization-org_warm${i}`, [{ type: 'OrganizationCreated', data: { ...created(1_000_000 + i), id: `org_warm${i}`, subdomain: `warm-${i}` }, metadata: meta() }], 'no_stream')
  await runner.waitFor(r.position, 5000)
}

let timeouts = 0
const lag = await paced(async (i) => {
  const r = await store.append(`organization-org_lag${i}`, [{ type: 'OrganizationCreated', data: created(i), metadata: meta() }], 'no_stream')
  const committed = process.hrtime.bigint()
  if (!(await runner.waitFor(r.position, 10_000))) timeouts++
  return ms(committed)
})

const raw = new pg.Pool({ connectionString: scratch.url, max: 20 })
raw.on('error', () => { /* dropped with the scratch database */ })
await raw.query('create table bench_raw (id bigint generated always as identity primary key, data jsonb not null)')
const insert = await paced(async (i) => {
  const t0 = process.hrtime.bigint()
  await raw.query('insert into bench_raw (data) values ($1)', [JSON.stringify(created(i))])
  return ms(t0)
})

const p = (xs: number[], q: number) => fmt(percentile(xs, q), 2)
process.stdout.write([
  `projection lag at ${RATE} events/s for ${SECONDS} s (${fmt(N)} events, ${allProjections.length} projections: ${allProjections.map((x) => x.name).join(', ')})`,
  `  achieved rate                      : ${fmt(lag.achieved)} events/s`,
  `  lag append-commit → projected      : p50 ${p(lag.samples, 50)} ms   p99 ${p(lag.samples, 99)} ms   max ${p(lag.samples, 100)} ms   (timeouts: ${timeouts})`,
  `  baseline single-row INSERT latency : p50 ${p(insert.samples, 50)} ms   p99 ${p(insert.samples, 99)} ms   (at ${fmt(insert.achieved)}/s)`,
  `  ratio lag p99 / INSERT p99         : ${fmt(percentile(lag.samples, 99) / percentile(insert.samples, 99), 2)}×`,
  `  goal p99 ≤ 10 ms                   : ${percentile(lag.samples, 99) <= 10 ? 'MET' : 'MISSED'}`,
  '',
].join('\n'))

await runner.stop()
await raw.end()
await projectorStore.close()
await projector.close()
await store.close()
await database.close()
await scratch.drop()
