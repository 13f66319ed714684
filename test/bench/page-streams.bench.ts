// Page streams on one API process (issue 24): 5,000 tracking-style streams plus 1,000 live-page
// streams, all of them here live-page streams (`/live/routes/<token>/stream`, the dispatcher's page;
// the public tracking stream is not on this branch): 500 routes with 10 streams each (as a route's
// recipients' pages would be) and one route with 1,000 (many dispatchers' pages on one route). One
// task status change at a time, through the API; the time until every stream of its route has the
// frame (from before the call). Baseline in the same run, same process: 100 streams (10 routes × 10)
// before the rest open. RSS of the server per idle stream. Run: bash test/bench/run-all.sh page-streams
// (or, with DATABASE_URL set, npx tsx test/bench/page-streams.bench.ts).
// BENCH_SMALL_ROUTES=500 BENCH_PER_ROUTE=10 BENCH_BIG_ROUTE=1000 BENCH_CHANGES=60.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { createPlatform } from '../../src/platform.js'
import { scratchDatabase, percentile } from './bench-database.js'
import { sleep, f1, rssMb, latencyLine, closeStreamBench, runBench } from './bench-report.js'
import { benchCarrier, freePort, platformServerArgs, platformServerKind, startProcess } from './bench-server.js'
import { subscribe, type Subscriber } from './sse-client.js'

const SMALL = Number(process.env['BENCH_SMALL_ROUTES'] ?? 500)
const PER_ROUTE = Number(process.env['BENCH_PER_ROUTE'] ?? 10)
const BIG = Number(process.env['BENCH_BIG_ROUTE'] ?? 1000)
const CHANGES = Number(process.env['BENCH_CHANGES'] ?? 60)
const BASELINE_ROUTES = 10
const ADMIN_TOKEN = 'bench-admin-token'
const SECRETS_KEY = Buffer.alloc(32, 9).toString('base64')
const work = mkdtempSync(join(tmpdir(), 'page-streams-bench-'))


/** One live page's stream, its own connection; resolves once its snapshot arrived. */
const subscribeLive = (base: string, path: string, routeId: number): Promise<Subscriber> => subscribe(`${base}${path}/stream`, routeId)

/** Opens `n` streams of a route, at most 100 connecting at once. */
async function openMany(base: string, path: string, routeId: number, n: number, into: Subscriber[]): Promise<void> {
  for (let i = 0; i < n; i += 100) into.push(...await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => subscribeLive(base, path, routeId))))
}

async function main(): Promise<void> {
  const db = await scratchDatabase('page_streams')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = { DATABASE_URL: db.url, ADMIN_TOKEN, SECRETS_KEY, DATA_DIR: join(work, 'data') }
  const server = await startProcess(work, 'platform', platformServerArgs(), {
    ...env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '100000000', LIVE_PAGE_RATE_LIMIT_PER_MINUTE: '0', SSE_STREAMS_PER_ADDRESS: '0', SSE_STREAMS_PER_PROCESS: '0', LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn', SSE_HEARTBEAT_MS: '15000',
  }, port)
  const writer = await createPlatform(loadConfig({ ...env }), { startProjections: false })
  const subs: Subscriber[] = []
  const routes = SMALL + 1
  try {
    console.log(`page streams: ${SMALL} routes × ${PER_ROUTE} live-page streams + 1 route × ${BIG} = ${SMALL * PER_ROUTE + BIG} on one API process; ` +
      `baseline ${BASELINE_ROUTES * PER_ROUTE} streams; ${CHANGES} changes one at a time per phase; platform ${platformServerKind()}, PostgreSQL`)
    const { token, orgId, headers, post } = await benchCarrier(base, ADMIN_TOKEN)
    const address = { name: 'Ana', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
    const meta = () => ({ actor: { kind: 'system' as const, id: 'bench' }, occurred_at: new Date().toISOString() })
    // Each route: enough tasks that every change of a phase is a new status (start, then complete).
    const TASKS = Math.max(2, Math.ceil(CHANGES / 2))
    const routeTasks: string[][] = []
    for (let r = 1; r <= routes; r++) {
      const n = r <= BASELINE_ROUTES || r === routes ? TASKS : 2
      const ulids: string[] = []
      for (let i = 0; i < n; i++) ulids.push((await post('/tasks', { type: 'delivery', address })).task.ulid)
      routeTasks.push(ulids)
      const now = new Date().toISOString()
      await writer.store.append(`route-${r}`, [{ type: 'RouteCreated', metadata: meta(), data: { route_id: r, organization_id: orgId, name: `Route ${r}`, shift_date: '2026-11-26', driver_id: null, vehicle_id: null, capacity: { grams: null, volume_cm3: null, packages: null }, start_address: null, end_address: null, created_at: now } }], 'no_stream')
      await writer.store.appendMany([
        { streamId: `route-${r}`, expected: 'any', events: [{ type: 'RouteTasksAdded', metadata: meta(), data: { route_id: r, organization_id: orgId, index: 0, added_at: now, tasks: ulids.map((ulid) => ({ ulid, type: 'delivery', load: { grams: 0, volume_cm3: 0, packages: 0 }, shipment_id: null })) } }] },
        ...ulids.map((ulid) => ({ streamId: `task-${ulid}`, expected: 'any' as const, events: [{ type: 'TaskRouted', metadata: meta(), data: { ulid, organization_id: orgId, route_id: r, routed_at: now } }] })),
      ])
    }
    for (let i = 0; ; i++) {
      const r = await fetch(`${base}/api/v1/routes/${routes}/progress`, { headers })
      if (r.status === 200 && (await r.json() as any).tasks.length === TASKS) break
      if (i > 600) throw new Error(`route ${routes} not projected`)
      await sleep(100)
    }
    const paths: string[] = []
    for (let r = 1; r <= routes; r++) paths.push(new URL((await post(`/routes/${r}/live-links`, { ttl_minutes: 120 })).url).pathname)

    for (const s of await Promise.all(Array.from({ length: 20 }, (_, i) => subscribeLive(base, paths[i % routes]!, (i % routes) + 1)))) s.close()
    await sleep(3000)
    const rssBefore = rssMb(server.child.pid!)

    const next = new Map<number, number>()
    /** `count` changes one at a time on routes chosen by `pick`; the latency to every stream of its route. */
    const measure = async (count: number, pick: (i: number) => number) => {
      const fromCall: number[] = []
      const call: number[] = []
      for (let i = 0; i < count; i++) {
        const routeId = pick(i)
        const k = next.get(routeId) ?? 0
        next.set(routeId, k + 1)
        const tasks = routeTasks[routeId - 1]!
        const ulid = tasks[Math.floor(k / 2) % tasks.length]!
        const action = k % 2 === 0 ? 'start' : 'complete'
        const mine = subs.filter((s) => s.routeId === routeId)
        const arrivals: number[] = []
        const want = `task.${action === 'start' ? 'started' : 'completed'}`
        const all = new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`change ${i} on route ${routeId}: ${arrivals.length}/${mine.length} streams heard it`)), 20_000)
          for (const s of mine) {
            s.onEvent = (event, data, at) => {
              if (data.task_ulid !== ulid || event !== want) return
              arrivals.push(at)
              if (arrivals.length === mine.length) { clearTimeout(timer); resolve() }
            }
          }
        })
        const t0 = performance.now()
        await post(`/tasks/${ulid}/${action}`, action === 'complete' ? { signed_by: 'Ana' } : {})
        call.push(performance.now() - t0)
        await all
        for (const at of arrivals) fromCall.push(at - t0)
        for (const s of mine) delete s.onEvent
      }
      return { fromCall, call }
    }

    // Baseline: 100 streams.
    for (let r = 1; r <= BASELINE_ROUTES; r++) await openMany(base, paths[r - 1]!, r, PER_ROUTE, subs)
    await sleep(2000)
    const rssBaseline = rssMb(server.child.pid!)
    const base100 = await measure(CHANGES, (i) => (i % BASELINE_ROUTES) + 1)

    // The rest: 5,900 more.
    const opened = performance.now()
    for (let r = BASELINE_ROUTES + 1; r <= SMALL; r++) await openMany(base, paths[r - 1]!, r, PER_ROUTE, subs)
    await openMany(base, paths[routes - 1]!, routes, BIG, subs)
    const openMs = performance.now() - opened
    await sleep(5000)
    const rssIdle = rssMb(server.child.pid!)
    const small = await measure(CHANGES, (i) => (i % BASELINE_ROUTES) + 1)
    const big = await measure(CHANGES, () => routes)
    console.log(`${subs.length} streams open (${subs.length - BASELINE_ROUTES * PER_ROUTE} opened in ${f1(openMs / 1000)} s, each with its snapshot)`)
    console.log(latencyLine(`baseline, ${BASELINE_ROUTES * PER_ROUTE} streams open: the API call alone`, base100.call))
    console.log(latencyLine(`baseline, ${BASELINE_ROUTES * PER_ROUTE} streams open: to each of its route's ${PER_ROUTE}`, base100.fromCall))
    console.log(latencyLine(`${subs.length} open: the API call alone`, [...small.call, ...big.call]))
    console.log(latencyLine(`${subs.length} open: to each of its route's ${PER_ROUTE}`, small.fromCall))
    console.log(latencyLine(`${subs.length} open: to each of the big route's ${BIG}`, big.fromCall))
    const all = [...small.fromCall, ...big.fromCall].sort((a, b) => a - b)
    const p99 = percentile(all, 99)
    console.log(`goal: a status change reaches its subscribers with p99 ≤ 500 ms (from before the call), ${subs.length} streams open: p99 ${f1(p99)} ms, ${p99 <= 500 ? 'met' : 'NOT met'}`)
    console.log(`server RSS: ${f1(rssBefore)} MB without streams, ${f1(rssBaseline)} MB with ${BASELINE_ROUTES * PER_ROUTE}, ${f1(rssIdle)} MB with ${subs.length} idle: ` +
      `${f1(((rssIdle - rssBefore) * 1024) / subs.length)} KB per idle stream`)
  } finally {
    await closeStreamBench({ subs, server, writer, db })
  }
}

runBench(main)
