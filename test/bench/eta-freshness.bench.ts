// ETA freshness (issue 23): BENCH_DRIVERS drivers (default 1,000), each on a started route of
// BENCH_STOPS deliveries, report a position every BENCH_EVERY_S seconds (default 5: 200 positions/s),
// open loop, for BENCH_SECONDS, against one API process on PostgreSQL + NATS (run-all.sh starts
// both). BENCH_SUBSCRIBED routes (default 50) have a subscriber on GET /routes/{id}/progress/stream;
// their drivers jump 3 km back and forth, so every one of their positions moves the ETAs by minutes
// and must bring a task.eta frame. Prints: the time from POST /drivers/me/positions returning to
// the first task.eta frame of that route reaching its subscriber (goal p99 ≤ 1 s), the POST's own
// latency for every driver (goal p99 ≤ 50 ms), beside the baseline in the same run, GET /health
// under the same load; and the API process's CPU per position (user + system, /proc).
// Run: bash test/bench/run-all.sh eta-freshness. BENCH_DRIVERS=1000 BENCH_STOPS=3 BENCH_EVERY_S=5
// BENCH_SECONDS=60 BENCH_SUBSCRIBED=50.
import http from 'node:http'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { scratchDatabase, percentile } from './bench-database.js'
import { sleep, f1, latencyLine } from './bench-report.js'
import { freePort, platformEnv, platformServerArgs, platformServerKind, startProcess } from './bench-server.js'
import { subscribeRouteProgress, type Subscriber } from './sse-client.js'
import { ApiClient } from '../../src/simulator/api-client.js'
import { inParallel, planDay } from '../../src/simulator/day.js'
import { Rng } from '../../src/simulator/random.js'
import { ServerClock } from '../../src/simulator/server-clock.js'

const DRIVERS = Number(process.env['BENCH_DRIVERS'] ?? 1000)
const STOPS = Number(process.env['BENCH_STOPS'] ?? 3)
const EVERY_MS = Number(process.env['BENCH_EVERY_S'] ?? 5) * 1000
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 60)
const SUBSCRIBED = Math.min(DRIVERS, Number(process.env['BENCH_SUBSCRIBED'] ?? 50))
const ADMIN_TOKEN = 'bench-admin-token'
const work = mkdtempSync(join(tmpdir(), 'eta-freshness-bench-'))
const depot = { lat: -32.95, lng: -60.65 }
/** User + system CPU of a process so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms). */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

async function main(): Promise<void> {
  const db = await scratchDatabase('eta_freshness')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const server = await startProcess(work, 'platform', platformServerArgs(), platformEnv({ port, adminToken: ADMIN_TOKEN, dataDir: join(work, 'data'), databaseUrl: db.url }), port)
  const subs: Subscriber[] = []
  try {
    console.log(`ETA freshness: ${DRIVERS} drivers × a position every ${EVERY_MS / 1000} s (${f1(DRIVERS * 1000 / EVERY_MS)} positions/s) for ${SECONDS} s, routes of ${STOPS} stops, ${SUBSCRIBED} routes subscribed; platform ${platformServerKind()}, PostgreSQL${process.env['NATS_URL'] ? ' + NATS' : ' + in-process bus (NATS_URL unset)'}`)
    const org = await (await fetch(`${base}/admin/v1/organizations`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Carrier', subdomain: `fresh-${Date.now().toString(36)}`, roles: ['carrier'] }),
    })).json() as any
    const api = new ApiClient(base, org.access_token)
    const clock = new ServerClock(1)
    const setupStart = Date.now()
    const day = await planDay(api, clock, {
      routes: DRIVERS, stops: STOPS, center: depot, radiusKm: 6, startInMs: 0, windowHours: 3, durationMinutes: 5, rng: new Rng(1), tag: 'fresh',
      log: (l) => console.log(`  setup: ${l}`),
    })
    // Every driver sets off: the first task started starts the route (the route-lifecycle consumer, on the bus).
    await inParallel(day.routes, 8, (r) => api.as(r.driverToken).call('POST', `/tasks/${r.stops[0]!.ulid}/start`))
    const sampled = Array.from({ length: SUBSCRIBED }, (_, i) => day.routes[Math.floor((i * day.routes.length) / SUBSCRIBED)]!)
    for (let i = 0; ; i++) {
      const states = await Promise.all([sampled.at(-1)!, day.routes.at(-1)!].map((r) => api.call('GET', `/routes/${r.id}`)))
      if (states.every((s) => s.status === 'started' && s.tasks.some((t: any) => t.eta))) break
      if (i > 600) throw new Error('routes not started with ETAs after 60 s')
      await sleep(100)
    }
    subs.push(...await inParallel(sampled, 8, (r) => subscribeRouteProgress(base, org.access_token, r.id)))
    console.log(`  setup: ${day.routes.length} routes started, ${subs.length} subscribers, in ${((Date.now() - setupStart) / 1000).toFixed(0)} s`)

    const sampledIds = new Set(sampled.map((r) => r.id))
    /** Per subscribed route, the position awaiting its frame: when its POST was sent and returned. */
    const waiting = new Map<number, { sent: number; returned: number | null }>()
    const freshness: number[] = []
    let framesMissed = 0
    for (const s of subs) {
      s.onEvent = (event, _data, at) => {
        if (event !== 'task.eta') return
        const w = waiting.get(s.routeId)
        if (!w || at < w.sent) return
        waiting.delete(s.routeId)
        freshness.push(Math.max(0, at - (w.returned ?? at)))
      }
    }
    const ingest: number[] = []
    const health: number[] = []
    let failed = 0
    let accepted = 0
    const near = (i: number) => ({ lat: depot.lat + 0.002 + (i % 5) * 0.00002, lng: depot.lng })
    const far = { lat: depot.lat + 0.03, lng: depot.lng }
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
    const post = (token: string, body: string) => new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}/api/v1/drivers/me/positions`, { method: 'POST', agent, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode ?? 0))
      })
      req.on('error', reject)
      req.end(body)
    })

    const cpu0 = cpuMs(server.child.pid!)
    const t0 = performance.now()
    const end = t0 + SECONDS * 1000
    const inflight: Promise<void>[] = []
    const healthLoop = (async () => {
      while (performance.now() < end) {
        const s = performance.now()
        await fetch(`${base}/health`).then((r) => r.arrayBuffer())
        health.push(performance.now() - s)
        await sleep(100)
      }
    })()
    // Open loop: driver i reports at t0 + i·EVERY/DRIVERS + k·EVERY, whatever the previous call is doing.
    for (let k = 0; ; k++) {
      let done = false
      for (let i = 0; i < day.routes.length; i++) {
        const due = t0 + k * EVERY_MS + (i * EVERY_MS) / day.routes.length
        if (due >= end) { done = true; break }
        const wait = due - performance.now()
        if (wait > 1) await sleep(wait)
        const r = day.routes[i]!
        const subscribed = sampledIds.has(r.id)
        const point = subscribed ? (k % 2 === 0 ? far : near(0)) : near(k)
        const body = JSON.stringify({ positions: [{ lat: point.lat, lng: point.lng, recorded_at: new Date().toISOString() }] })
        const sent = performance.now()
        const w = subscribed ? { sent, returned: null as number | null } : null
        if (w) {
          if (waiting.has(r.id)) framesMissed++
          waiting.set(r.id, w)
        }
        inflight.push(post(r.driverToken, body).then((status) => {
          const returned = performance.now()
          ingest.push(returned - sent)
          if (w) w.returned = returned
          if (status === 202) accepted++
          else failed++
        }, () => { failed++ }))
      }
      if (done) break
    }
    await Promise.all(inflight)
    await healthLoop
    const elapsed = (performance.now() - t0) / 1000
    const cpu = cpuMs(server.child.pid!) - cpu0
    await sleep(2000)
    framesMissed += waiting.size
    agent.destroy()

    console.log('')
    console.log(`${accepted} positions accepted (${failed} failed) in ${f1(elapsed)} s: ${f1(accepted / elapsed)} positions/s`)
    console.log(latencyLine('baseline: GET /health under the same load', health))
    console.log(latencyLine('ingestion: POST /drivers/me/positions (every driver)', ingest))
    console.log(latencyLine('freshness: POST returned → task.eta frame at the subscriber', freshness))
    console.log(`positions of subscribed routes without a frame before the next position: ${framesMissed}`)
    const pIngest = percentile([...ingest].sort((a, b) => a - b), 99)
    const pFresh = percentile([...freshness].sort((a, b) => a - b), 99)
    console.log(`goal freshness p99 ≤ 1000 ms: ${pFresh <= 1000 ? 'met' : 'NOT met'}; goal ingestion p99 ≤ 50 ms: ${pIngest <= 50 ? 'met' : 'NOT met'}`)
    console.log(`API process CPU (user + system) over the load: ${(cpu / 1000).toFixed(1)} s of ${f1(elapsed)} s (${f1((100 * cpu) / (elapsed * 1000))} % of one core), ${f1((cpu * 1000) / Math.max(1, accepted))} µs per position (request, storage, the ETA engine's rounds, frames; PostgreSQL's own CPU not included)`)
  } finally {
    for (const s of subs) s.close()
    await server.stop()
    await db.drop()
  }
}

main().then(() => process.exit(0), (err) => { console.error(err); process.exit(1) })
