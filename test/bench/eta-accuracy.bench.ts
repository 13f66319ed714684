// ETA accuracy on a simulated day (issue 23): the driver simulator drives BENCH_ROUTES routes of
// BENCH_STOPS deliveries through the public API of a server whose clock runs BENCH_CLOCK_RATE times
// faster than real time; then the analysts' table `task_eta_history` is read: the ETA in force 60,
// 30 and 10 minutes before each actual arrival against that arrival, beside the naive baseline in
// the same run, "the planned time of the stop" (the route walked from the depot at its start at
// ROUTING_SPEED_KMH, waiting for windows, staying each duration: what the plan says). Goal: p90 at
// 30 minutes at most half the baseline's. Also: how many arrivals fell inside the ETA's window.
// Run: bash test/bench/run-all.sh eta-accuracy (PostgreSQL + NATS), or with DATABASE_URL set,
// npx tsx test/bench/eta-accuracy.bench.ts. BENCH_ROUTES=20 BENCH_STOPS=25 BENCH_CLOCK_RATE=60 BENCH_SEED=1.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { scratchDatabase, percentile } from './bench-database.js'
import { freePort, platformServerArgs, platformServerKind, startProcess } from './bench-server.js'
import { ApiClient } from '../../src/simulator/api-client.js'
import { planDay, type PlannedRoute } from '../../src/simulator/day.js'
import { driveRoute, type StopOutcome } from '../../src/simulator/driver.js'
import { Rng } from '../../src/simulator/random.js'
import { ServerClock } from '../../src/simulator/server-clock.js'
import { computeEtas } from '../../src/etas/eta-method.js'

const ROUTES = Number(process.env['BENCH_ROUTES'] ?? 20)
const STOPS = Number(process.env['BENCH_STOPS'] ?? 25)
const RATE = Number(process.env['BENCH_CLOCK_RATE'] ?? 60)
const SEED = Number(process.env['BENCH_SEED'] ?? 1)
const SPEED_KMH = 30
const HORIZONS_MIN = [60, 30, 10]
const ADMIN_TOKEN = 'bench-admin-token'
const work = mkdtempSync(join(tmpdir(), 'eta-accuracy-bench-'))
const depot = { lat: -32.95, lng: -60.65 }

/** The plan's time of each stop: the route walked from the depot at its start, knowing nothing of the day. */
function plannedTimes(route: PlannedRoute, startedAt: number): Map<string, number> {
  const etas = computeEtas({
    stops: route.stops.map((s) => ({ ulid: s.ulid, status: 'pending', point: s.point, windows: s.windows, serviceMs: s.serviceMs, arrivedAt: null, finalAt: null })),
    start: depot, startedAt, position: null,
  }, startedAt, SPEED_KMH)
  return new Map(etas.map((e) => [e.ulid, e.at]))
}

const minutes = (ms: number) => (ms / 60_000).toFixed(1)

async function main(): Promise<void> {
  const db = await scratchDatabase('eta_accuracy')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const server = await startProcess(work, 'platform', platformServerArgs(), {
    DATABASE_URL: db.url, ADMIN_TOKEN, DATA_DIR: join(work, 'data'), PORT: String(port), HOST: '127.0.0.1', CLOCK_RATE: String(RATE),
    ROUTING_SPEED_KMH: String(SPEED_KMH), RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
  }, port)
  const client = new pg.Client({ connectionString: db.url })
  try {
    console.log(`ETA accuracy: ${ROUTES} routes × ${STOPS} stops, server clock ×${RATE}, seed ${SEED}; platform ${platformServerKind()}, PostgreSQL${process.env['NATS_URL'] ? ' + NATS' : ''}`)
    const org = await (await fetch(`${base}/admin/v1/organizations`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Carrier', subdomain: `eta-${Date.now().toString(36)}`, roles: ['carrier'] }),
    })).json() as any
    const api = new ApiClient(base, org.access_token)
    const clock = new ServerClock(RATE)
    const rng = new Rng(SEED)
    const day = await planDay(api, clock, {
      routes: ROUTES, stops: STOPS, center: depot, radiusKm: 6, startInMs: 10 * 60_000, windowHours: 2, durationMinutes: 5, rng, tag: `b${SEED}`,
      log: (l) => console.log(`  ${l}`),
    })
    const startAt = Math.max(day.startAt, clock.now() + 60_000)
    const planned = new Map<string, number>()
    day.routes.forEach((r, i) => { for (const [u, at] of plannedTimes(r, startAt + i * 5_000)) planned.set(u, at) })
    const posted: number[] = []
    const realStart = Date.now()
    const outcomes: StopOutcome[] = (await Promise.all(day.routes.map((r, i) => driveRoute(api.as(r.driverToken), clock, r, depot, startAt + i * 5_000, {
      speedKmh: SPEED_KMH, driverSpread: 0.15, legSpread: 0.12, serviceSpread: 0.3, failRate: 0.05, positionEveryMs: 15_000,
    }, new Rng(SEED * 1000 + i), (e) => { if (e.kind === 'position') posted.push(e.tookMs) })))).flat()
    console.log(`  drove the day in ${((Date.now() - realStart) / 1000).toFixed(0)} s real: ${outcomes.length} stops (${outcomes.filter((o) => o.failed).length} failed), ${posted.length} positions`)
    await new Promise((r) => setTimeout(r, 3000))

    await client.connect()
    const rows = (await client.query<{ task_ulid: string; computed_at: Date; eta_at: Date; eta_from: Date; eta_to: Date; arrived_at: Date | null; basis: string; window_from: Date | null }>(
      `select task_ulid, computed_at, eta_at, eta_from, eta_to, arrived_at, basis, window_from from read_model.task_eta_history order by task_ulid, seq`)).rows
    const byTask = new Map<string, typeof rows>()
    for (const r of rows) (byTask.get(r.task_ulid) ?? byTask.set(r.task_ulid, []).get(r.task_ulid)!).push(r)
    console.log(`  task_eta_history: ${rows.length} ETAs stated for ${byTask.size} tasks (${(rows.length / Math.max(1, byTask.size)).toFixed(1)} each)`)
    console.log('')
    console.log('horizon  | ETA |err| p50   p90  (inside window) | baseline |err| p50   p90 | p90 ratio | n')
    // All arrivals; then only those that did not wait for their window to open (arrived a minute or
    // more after it opened): where the day's noise shows, not absorbed by a wait that both share.
    for (const [label, waitedToo] of [['all arrivals', true], ['arrivals that did not wait for their window', false]] as const) {
      console.log(`${label}:`)
      for (const h of HORIZONS_MIN) {
        const eta: number[] = []
        const plan: number[] = []
        let inside = 0
        for (const [ulid, history] of byTask) {
          const arrived = history.find((x) => x.arrived_at)?.arrived_at
          if (!arrived || !planned.has(ulid)) continue
          const opened = history.at(-1)!.window_from
          if (!waitedToo && opened && arrived.getTime() < opened.getTime() + 60_000) continue
          const at = arrived.getTime() - h * 60_000
          // The ETA in force then: the last one stated at or before it (restated when it moved by a minute).
          const inForce = history.filter((x) => x.computed_at.getTime() <= at).at(-1)
          if (!inForce) continue
          eta.push(Math.abs(inForce.eta_at.getTime() - arrived.getTime()))
          plan.push(Math.abs(planned.get(ulid)! - arrived.getTime()))
          if (inForce.eta_from.getTime() <= arrived.getTime() && arrived.getTime() <= inForce.eta_to.getTime()) inside++
        }
        eta.sort((a, b) => a - b)
        plan.sort((a, b) => a - b)
        const ratio = percentile(eta, 90) / percentile(plan, 90)
        console.log(`${String(h).padStart(3)} min  |      ${minutes(percentile(eta, 50)).padStart(5)} ${minutes(percentile(eta, 90)).padStart(5)}  (${(100 * inside / Math.max(1, eta.length)).toFixed(0).padStart(3)} %)       |         ${minutes(percentile(plan, 50)).padStart(5)} ${minutes(percentile(plan, 90)).padStart(5)} | ${ratio.toFixed(2).padStart(9)} | ${eta.length}`)
      }
    }
    const p = [...posted].sort((a, b) => a - b)
    console.log('')
    console.log(`(minutes of simulated time; goal: p90 at 30 min ≤ 0.5 × the baseline's. Positions: POST p50 ${percentile(p, 50).toFixed(1)} ms, p99 ${percentile(p, 99).toFixed(1)} ms.)`)
  } finally {
    await client.end().catch(() => undefined)
    await server.stop()
    await db.drop()
  }
}

main().catch((err) => { console.error(err); process.exit(1) })
