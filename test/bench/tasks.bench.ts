// Tasks benchmark (issue "Operations I"), against a real PostgreSQL server and, under run-all.sh,
// nats-server (NATS_URL): in one run and one server,
//  1. POST /api/v1/shipments (the reference: the goal is tasks at least as fast),
//  2. POST /api/v1/tasks (a new address resolved offline, a time window),
//  3. POST /api/v1/tasks/{ulid}/complete, each request completing another task made in 2,
// each as peak req/s and p50/p99 under autocannon, then "sustained": the measured requests over the
// measured seconds plus the time the projections, the relay and the reactions take to catch up.
//
//   bash test/bench/run-all.sh tasks
//   (or: bash infra/local/start-postgres.sh /tmp/benchpg && source /tmp/benchpg/env && npx tsx test/bench/tasks.bench.ts)
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { freePort, platformEnv, platformServerArgs, platformServerKind, startProcess, contractedPair } from './bench-server.js'
import { scratchDatabase } from './bench-database.js'
import { CONNECTIONS, drained, f0, type Figures, line, SECONDS, WARMUP } from './http-load.js'

const ADMIN_TOKEN = `adm_bench_${randomBytes(8).toString('hex')}`
const work = mkdtempSync(join(tmpdir(), 'tasks-bench-'))

const SHIPMENT = (carrierId: string) => JSON.stringify({
  carrier_id: carrierId,
  origin: { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', phone: '+54 351 422 1234' },
  destination: { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
  packages: [{ original_weight: 2.5, weight_unit: 'kg', length: 30, width: 20, height: 10 }],
})

const TASK = JSON.stringify({
  type: 'delivery',
  address: { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR', phone: '+54 341 422 1234' },
  time_windows: [{ from: '2026-12-01T12:00:00Z', to: '2026-12-01T15:00:00Z' }],
  load: { grams: 2500, volume_cm3: 6000, packages: 1 },
  duration_minutes: 5,
})

interface Measured { peak: Figures; sustained: number; drainMs: number }

/** A peak under autocannon, then the sustained rate once the background has caught up with it. */
async function measure(base: string, opts: autocannon.Options): Promise<Measured> {
  const r = await autocannon({ connections: CONNECTIONS, duration: SECONDS, ...opts })
  const measuredSeconds = Number(r['duration'] ?? SECONDS)
  const peak = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts }
  const drainMs = await drained(base)
  const done = Number((r.requests as { total?: number }).total ?? peak.rps * measuredSeconds)
  return { peak, drainMs, sustained: done / (measuredSeconds + drainMs / 1000) }
}

const report = (name: string, m: Measured) => {
  console.log(line(`${name}, peak`, m.peak))
  console.log(`${`  caught up after ${f0(m.drainMs)} ms: sustained`.padEnd(46)} ${f0(m.sustained).padStart(7)} req/s`)
}

async function main(): Promise<void> {
  if (!process.env['DATABASE_URL']) {
    console.log('DATABASE_URL not set: bash infra/local/start-postgres.sh /tmp/benchpg && source /tmp/benchpg/env')
    process.exit(2)
  }
  console.log(`autocannon: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${SECONDS} s measured; platform ${platformServerKind()}; bus ${process.env['NATS_URL'] ? 'NATS JetStream' : 'in-process'}`)
  const db = await scratchDatabase('tasks')
  const port = await freePort()
  const server = await startProcess(work, 'platform', platformServerArgs(), platformEnv({ port, adminToken: ADMIN_TOKEN, dataDir: join(work, 'data'), databaseUrl: db.url }), port)
  try {
    const base = `http://127.0.0.1:${port}`
    const { carrier, shipper } = await contractedPair(base, ADMIN_TOKEN)
    const json = { 'content-type': 'application/json' }
    const asShipper = { authorization: `Bearer ${shipper.access_token}`, ...json }
    const asCarrier = { authorization: `Bearer ${carrier.access_token}`, ...json }

    const shipments = { url: `${base}/api/v1/shipments`, method: 'POST' as const, headers: asShipper, body: SHIPMENT(carrier.organization.id) }
    const tasks = { url: `${base}/api/v1/tasks`, method: 'POST' as const, headers: asCarrier, body: TASK }
    for (const warm of [shipments, tasks]) {
      const first = await fetch(warm.url, { method: 'POST', headers: warm.headers, body: warm.body })
      if (first.status !== 201) throw new Error(`${warm.url}: ${first.status} ${await first.text()}`)
      await autocannon({ ...warm, connections: CONNECTIONS, duration: WARMUP })
    }
    await drained(base)

    const shipped = await measure(base, shipments)
    report('POST /shipments', shipped)

    // The tasks created here are the ones the complete phase completes, one per request.
    const created: string[] = []
    // autocannon hands response bodies only to a per-request `onResponse` (a top-level one is ignored).
    const made = await measure(base, {
      url: base, headers: asCarrier,
      requests: [{
        method: 'POST', path: '/api/v1/tasks', headers: asCarrier, body: TASK,
        onResponse: (status: number, body: string) => { if (status === 201) created.push(JSON.parse(body).task.ulid) },
      }],
    } as unknown as autocannon.Options)
    report('POST /tasks', made)

    let next = 0
    const completed = await measure(base, {
      url: base, connections: CONNECTIONS, amount: created.length,
      requests: [{
        method: 'POST', headers: asCarrier, body: JSON.stringify({ signed_by: 'Ana Gómez' }),
        setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `/api/v1/tasks/${created[next++ % created.length]}/complete` }),
      }],
    } as unknown as autocannon.Options)
    report(`POST /tasks/{ulid}/complete (${f0(created.length)} tasks)`, completed)

    console.log('')
    const ratio = (m: Measured) => (m.sustained / shipped.sustained).toFixed(2)
    console.log(`POST /tasks vs POST /shipments (sustained): ${ratio(made)}×; p99 ${made.peak.p99} vs ${shipped.peak.p99} ms (goal ≥ 1×: ${made.sustained >= shipped.sustained ? 'met' : 'NOT met'})`)
    console.log(`POST /tasks/{ulid}/complete vs POST /shipments (sustained): ${ratio(completed)}×; p99 ${completed.peak.p99} vs ${shipped.peak.p99} ms (goal ≥ 1×: ${completed.sustained >= shipped.sustained ? 'met' : 'NOT met'})`)
  } finally {
    await server.stop()
    await db.drop()
    rmSync(work, { recursive: true, force: true })
  }
}

await main()
