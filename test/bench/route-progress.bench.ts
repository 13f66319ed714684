// Live route progress: 1,000 server-sent-event subscribers on 100 routes (10 each) held by one API
// process; one task change at a time reaches every subscriber of its route. Prints the delivery
// latency (from before the API call, and from its return) beside the API call itself (the
// baseline), and the server's RSS with the 1,000 idle streams vs without (goal ≤ 50 MB more).
// Run: bash test/bench/run-all.sh route-progress (or, with DATABASE_URL set, npx tsx
// test/bench/route-progress.bench.ts). BENCH_ROUTES=100 BENCH_PER_ROUTE=10 BENCH_CHANGES=100.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.js'
import { createPlatform } from '../../src/platform.js'
import { scratchDatabase, percentile } from './bench-database.js'
import { sleep, f1, rssMb, latencyLine, closeStreamBench, runBench } from './bench-report.js'
import { benchCarrier, freePort, platformServerArgs, platformServerKind, startProcess } from './bench-server.js'
import { subscribeRouteProgress, type Subscriber } from './sse-client.js'

const ROUTES = Number(process.env['BENCH_ROUTES'] ?? 100)
const PER_ROUTE = Number(process.env['BENCH_PER_ROUTE'] ?? 10)
const CHANGES = Number(process.env['BENCH_CHANGES'] ?? 100)
const ADMIN_TOKEN = 'bench-admin-token'
const SECRETS_KEY = Buffer.alloc(32, 9).toString('base64')
const work = mkdtempSync(join(tmpdir(), 'route-progress-bench-'))


async function main(): Promise<void> {
  const db = await scratchDatabase('route_progress')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const env = { DATABASE_URL: db.url, ADMIN_TOKEN, SECRETS_KEY, DATA_DIR: join(work, 'data') }
  const server = await startProcess(work, 'platform', platformServerArgs(), {
    ...env, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '100000000', SSE_STREAMS_PER_ADDRESS: '0', SSE_STREAMS_PER_PROCESS: '0', LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
  }, port)
  // The routes module is not there yet: route histories are appended straight to the event store
  // (the contract of schemas/events/routes.ts) from this process; the server projects them.
  const writer = await createPlatform(loadConfig({ ...env }), { startProjections: false })
  const subs: Subscriber[] = []
  try {
    console.log(`route progress: ${ROUTES} routes × ${PER_ROUTE} subscribers, ${CHANGES} changes one at a time; platform ${platformServerKind()}, PostgreSQL`)
    const { token, orgId, headers, post } = await benchCarrier(base, ADMIN_TOKEN)
    const address = { name: 'Ana', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
    const routeTasks: string[][] = []
    const meta = () => ({ actor: { kind: 'system' as const, id: 'bench' }, occurred_at: new Date().toISOString() })
    let last = ''
    for (let r = 1; r <= ROUTES; r++) {
      const ulids: string[] = []
      for (let i = 0; i < 2; i++) ulids.push((await post('/tasks', { type: 'delivery', address })).task.ulid)
      routeTasks.push(ulids)
      const now = new Date().toISOString()
      await writer.store.append(`route-${r}`, [{ type: 'RouteCreated', metadata: meta(), data: { route_id: r, organization_id: orgId, name: null, shift_date: '2026-11-26', driver_id: null, vehicle_id: null, capacity: { grams: null, volume_cm3: null, packages: null }, start_address: null, end_address: null, created_at: now } }], 'no_stream')
      const res = await writer.store.appendMany([
        { streamId: `route-${r}`, expected: 'any', events: [{ type: 'RouteTasksAdded', metadata: meta(), data: { route_id: r, organization_id: orgId, index: 0, added_at: now, tasks: ulids.map((ulid) => ({ ulid, type: 'delivery', load: { grams: 0, volume_cm3: 0, packages: 0 }, shipment_id: null })) } }] },
        ...ulids.map((ulid) => ({ streamId: `task-${ulid}`, expected: 'any' as const, events: [{ type: 'TaskRouted', metadata: meta(), data: { ulid, organization_id: orgId, route_id: r, routed_at: now } }] })),
      ])
      last = res[0]!.position
    }
    // Wait until the server has projected every route.
    for (let i = 0; ; i++) {
      const r = await fetch(`${base}/api/v1/routes/${ROUTES}/progress`, { headers })
      if (r.status === 200 && (await r.json() as any).tasks.length === 2) break
      if (i > 300) throw new Error(`route ${ROUTES} not projected (${last})`)
      await sleep(100)
    }
    // Warm the stream path up (code loaded, pools filled) before the baseline RSS.
    for (const s of await Promise.all(Array.from({ length: 20 }, (_, i) => subscribeRouteProgress(base, token, (i % ROUTES) + 1)))) s.close()
    await sleep(3000)
    const rssBefore = rssMb(server.child.pid!)

    const opened = performance.now()
    for (let r = 1; r <= ROUTES; r++) subs.push(...await Promise.all(Array.from({ length: PER_ROUTE }, () => subscribeRouteProgress(base, token, r))))
    const openMs = performance.now() - opened
    await sleep(3000)
    const rssIdle = rssMb(server.child.pid!)

    const fromCall: number[] = []
    const fromReturn: number[] = []
    const call: number[] = []
    for (let i = 0; i < CHANGES; i++) {
      const routeId = (i % ROUTES) + 1
      const ulid = routeTasks[routeId - 1]![Math.floor(i / ROUTES) % 2]!
      const action = Math.floor(i / (2 * ROUTES)) % 2 === 0 ? 'start' : 'complete'
      const mine = subs.filter((s) => s.routeId === routeId)
      const arrivals: number[] = []
      const all = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`change ${i}: ${arrivals.length}/${mine.length} subscribers heard it`)), 10_000)
        for (const s of mine) {
          s.onEvent = (event, data, at) => {
            if (data.task_ulid !== ulid || event !== `task.${action === 'start' ? 'started' : 'completed'}`) return
            arrivals.push(at)
            if (arrivals.length === mine.length) { clearTimeout(timer); resolve() }
          }
        }
      })
      const t0 = performance.now()
      await post(`/tasks/${ulid}/${action}`, action === 'complete' ? { signed_by: 'Ana' } : {})
      const t1 = performance.now()
      await all
      call.push(t1 - t0)
      for (const at of arrivals) { fromCall.push(at - t0); fromReturn.push(at - t1) }
      for (const s of mine) delete s.onEvent
    }

    const hub = await (await fetch(`${base}/health`)).status
    console.log(`${subs.length} streams opened in ${f1(openMs)} ms (each got its snapshot); /health ${hub}`)
    console.log(latencyLine('baseline: the API call alone (POST /tasks/{ulid}/…)', call))
    console.log(latencyLine('delivery to each subscriber, from before the call', fromCall))
    console.log(latencyLine('delivery to each subscriber, from the call\'s return', fromReturn))
    const p99 = percentile([...fromCall].sort((a, b) => a - b), 99)
    console.log(`goal p99 ≤ 200 ms (from before the call): ${p99 <= 200 ? 'met' : 'NOT met'}`)
    console.log(`server RSS: ${f1(rssBefore)} MB without streams, ${f1(rssIdle)} MB with ${subs.length} idle streams: +${f1(rssIdle - rssBefore)} MB (goal ≤ 50 MB: ${rssIdle - rssBefore <= 50 ? 'met' : 'NOT met'})`)
  } finally {
    await closeStreamBench({ subs, server, writer, db })
  }
}

runBench(main)
