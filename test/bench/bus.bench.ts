// Relay + bus benchmark (issue 3 §7). Run: npx tsx test/bench/bus.bench.ts
//   BENCH_EVENTS=20000     backlog size for the throughput runs
//   BENCH_SECONDS=10       length of the 500 events/s latency run
//   BENCH_DATABASE_URL     a PostgreSQL admin URL: adds the PostgreSQL runs (a scratch database is created and dropped)
//   NATS_URL               a JetStream server; otherwise a private nats-server is started when installed
// Not a tap test (tap runs test/**/*.test.ts only).
import { randomBytes, randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { scratchDatabaseAt } from './bench-database.js'
import type { Bus, Handler } from '../../src/infrastructure/bus/bus.js'
import { InProcessBus } from '../../src/infrastructure/bus/in-process-bus.js'
import { NatsBus } from '../../src/infrastructure/bus/nats-bus.js'
import { type DatabaseHandle, openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateInfrastructure } from '../../src/infrastructure/database/migrate.js'
import type { NewEvent } from '../../src/infrastructure/event-store/event-store.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { idempotent } from '../../src/processes/idempotent-consumer.js'
import { Relay } from '../../src/processes/relay.js'
import { natsServerBinary, startNatsServer } from '../helpers/nats-server.js'

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 20_000)
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10)
const RATE = 500

const metadata = () => ({ actor: { kind: 'system' as const, id: 'bench' }, occurred_at: new Date().toISOString() })

interface Setup { label: string; db: DatabaseHandle; bus: Bus; done(): Promise<void> }

const scratchPostgres = (admin: string) => scratchDatabaseAt(admin, 'bus')

async function openBenchDb(): Promise<{ db: DatabaseHandle; done(): Promise<void> }> {
  const scratch = await scratchPostgres(process.env['BENCH_DATABASE_URL']!)
  const db = await openDatabase({ url: scratch.url, poolSize: 20 })
  await migrateInfrastructure(db.db)
  return { db, async done() { await db.close(); await scratch.drop() } }
}

async function setup(dbKind: 'postgres', busKind: 'in-process' | 'nats', natsUrl: string | undefined): Promise<Setup> {
  const { db, done } = await openBenchDb()
  if (busKind === 'in-process') {
    const bus = new InProcessBus(db, { pollMs: 1000 })
    await bus.start()
    return { label: `in-process bus on ${dbKind}`, db, bus, async done() { await bus.close(); await done() } }
  }
  const bus = await NatsBus.connect({ url: natsUrl!, db: db.db, streamName: `BENCH_${randomBytes(3).toString('hex')}`, subjectPrefix: `b${randomBytes(3).toString('hex')}.` })
  return { label: `NATS JetStream (events in ${dbKind})`, db, bus, async done() { await bus.destroyStream(); await bus.close(); await done() } }
}

async function appendBacklog(store: PostgresEventStore, category: string, n: number): Promise<void> {
  const perAppend = 100
  for (let i = 0; i < n; i += perAppend) {
    const events: NewEvent[] = Array.from({ length: Math.min(perAppend, n - i) }, (_, j) => ({ type: 'BenchTicked', data: { i: i + j }, metadata: metadata() }))
    await store.append(`${category}-${i / perAppend}`, events, 'any')
  }
}

function waitUntil(check: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs
    const tick = () => {
      if (check()) return resolve()
      if (Date.now() > deadline) return reject(new Error('benchmark timed out'))
      setTimeout(tick, 5)
    }
    tick()
  })
}

async function throughput(s: Setup, mode: 'ack' | 'idempotent'): Promise<number> {
  const store = new PostgresEventStore(s.db.db)
  // A category of its own per run: earlier runs' messages stay on the bus and must not count.
  const category = `bench${randomBytes(3).toString('hex')}`
  await appendBacklog(store, category, EVENTS)
  let handled = 0
  const plain: Handler = () => { handled++ }
  const handler: Handler = mode === 'ack' ? plain : idempotent(s.db.db, async () => { handled++ })
  const consumer = `${category}_${mode}`
  const started = performance.now()
  const sub = await s.bus.subscribe({ name: consumer, subjects: [`events.${category}.>`] }, handler)
  const relay = new Relay(s.db.db, store, s.bus, { name: consumer })
  relay.start()
  await waitUntil(() => handled >= EVENTS, 600_000)
  const seconds = (performance.now() - started) / 1000
  await relay.stop()
  await sub.stop()
  await sql`truncate es_events, es_streams`.execute(s.db.db)
  return EVENTS / seconds
}

async function latency(s: Setup): Promise<{ p50: number; p99: number; max: number; n: number; rate: number }> {
  const store = new PostgresEventStore(s.db.db)
  const latencies: number[] = []
  const consumer = `bench_latency_${randomBytes(3).toString('hex')}`
  const sub = await s.bus.subscribe<{ data: { sentAt: number } }>({ name: consumer, subjects: ['events.lat.>'] }, (d) => {
    latencies.push(performance.now() - d.data.data.sentAt)
  })
  const relay = new Relay(s.db.db, store, s.bus, { name: consumer })
  relay.start()
  const total = RATE * SECONDS
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    // Open loop: event i is due at i/RATE seconds; the clock starts before the append call.
    const due = started + (i * 1000) / RATE
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    await store.append(`lat-${i % 50}`, [{ id: randomUUID(), type: 'LatencyProbe', data: { sentAt: performance.now() }, metadata: metadata() }], 'any')
  }
  const rate = total / ((performance.now() - started) / 1000)
  await waitUntil(() => latencies.length >= total, 120_000)
  await relay.stop()
  await sub.stop()
  const sorted = [...latencies].sort((a, b) => a - b)
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
  return { p50: q(0.5), p99: q(0.99), max: sorted[sorted.length - 1]!, n: sorted.length, rate }
}

async function main(): Promise<void> {
  let natsUrl = process.env['NATS_URL']
  let ownNats: Awaited<ReturnType<typeof startNatsServer>> | undefined
  const binary = natsServerBinary()
  if (!natsUrl && binary) {
    ownNats = await startNatsServer(binary)
    natsUrl = ownNats.url
  }
  if (!process.env['BENCH_DATABASE_URL']) throw new Error('set BENCH_DATABASE_URL to a PostgreSQL admin URL (test/bench/run-all.sh does)')
  const dbKinds: 'postgres'[] = ['postgres']
  const busKinds: ('in-process' | 'nats')[] = natsUrl ? ['in-process', 'nats'] : ['in-process']
  console.log(`bus benchmark: backlog ${EVENTS} events, latency run ${RATE} events/s for ${SECONDS} s; node ${process.version}`)
  if (!natsUrl) console.log('NATS runs SKIPPED: no NATS_URL and no nats-server binary')
  const rows: string[] = []
  try {
    for (const dbKind of dbKinds) {
      for (const busKind of busKinds) {
        const s = await setup(dbKind, busKind, natsUrl)
        try {
          const ack = await throughput(s, 'ack')
          const idem = await throughput(s, 'idempotent')
          const lat = await latency(s)
          const line = `${s.label.padEnd(34)} relay+consumer ${ack.toFixed(0).padStart(6)} ev/s (ack) ${idem.toFixed(0).padStart(6)} ev/s (idempotent) | ` +
            `append→handler at ${lat.rate.toFixed(0)} ev/s: p50 ${lat.p50.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms, max ${lat.max.toFixed(1)} ms (n=${lat.n})`
          console.log(line)
          rows.push(line)
        } finally {
          await s.done()
        }
      }
    }
  } finally {
    await ownNats?.destroy()
  }
}

await main()
