// Routes benchmark (issue "Operations III"): adding a task to a route that already holds 300 tasks,
// p50/p99 server time (goal p99 ≤ 10 ms), beside POST /tasks in the same run as the baseline.
// Server time: each request alone (no queueing), timed around fastify's `inject` in the process
// that serves it, against a real PostgreSQL server; the projections run in the same process as in
// an API process, and the answer waits for them (read-your-writes), as every command does.
//
//   bash test/bench/run-all.sh route-add
//   (or: bash infra/local/start-postgres.sh /tmp/benchpg && set -a && source /tmp/benchpg/env && set +a && npx tsx test/bench/route-add.bench.ts)
import { percentile } from './bench-database.js'
import { inProcessApp } from './in-process-app.js'

const ROUTE_TASKS = 300
const MEASURED = Number(process.env['ROUTE_BENCH_REQUESTS'] ?? 200)
const WARMUP = 30

const TASK = {
  type: 'delivery',
  address: { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR' },
  time_windows: [{ from: '2026-12-01T12:00:00Z', to: '2026-12-01T15:00:00Z' }],
  load: { grams: 100, volume_cm3: 100, packages: 1 },
}

async function main(): Promise<void> {
  const { call, carrier, close, platform } = await inProcessApp('bench-routes')
  try {
    const token = await carrier('Bench routes')

    // Baseline: POST /tasks, one at a time; the tasks made are the ones added below.
    const taskTimes: number[] = []
    const ulids: string[] = []
    for (let i = 0; i < ROUTE_TASKS + WARMUP * 2 + MEASURED; i++) {
      const r = await call('POST', '/api/v1/tasks', token, TASK)
      if (r.status !== 201) throw new Error(`task: ${r.body}`)
      ulids.push(JSON.parse(r.body).task.ulid)
      if (i >= WARMUP) taskTimes.push(r.ms)
    }
    const van = await call('POST', '/api/v1/vehicles', token, { name: 'Van', plate: 'BENCH 1', capacity: { grams: 100_000_000, packages: 100_000 } })
    const route = await call('POST', '/api/v1/routes', token, { shift_date: '2026-12-01', vehicle_id: JSON.parse(van.body).vehicle.id })
    const routeId = JSON.parse(route.body).route.id as number
    for (let i = 0; i < ROUTE_TASKS; i += 100) {
      const r = await call('POST', `/api/v1/routes/${routeId}/tasks`, token, { task_ulids: ulids.slice(i, i + 100) })
      if (r.status !== 200) throw new Error(`fill: ${r.body}`)
    }
    const getTimes: number[] = []
    for (let i = 0; i < WARMUP + MEASURED; i++) {
      const r = await call('GET', `/api/v1/routes/${routeId}`, token)
      if (r.status !== 200) throw new Error(`get: ${r.body}`)
      if (i >= WARMUP) getTimes.push(r.ms)
    }
    const addTimes: number[] = []
    const removeTimes: number[] = []
    let next = ROUTE_TASKS
    for (let i = 0; i < WARMUP + MEASURED; i++) {
      // Add one at the end, then take it off again (measured apart), so the route stays at 300.
      const ulid = ulids[next++]!
      const added = await call('POST', `/api/v1/routes/${routeId}/tasks`, token, { task_ulids: [ulid] })
      if (added.status !== 200) throw new Error(`add: ${added.body}`)
      const removed = await call('DELETE', `/api/v1/routes/${routeId}/tasks/${ulid}`, token)
      if (removed.status !== 200) throw new Error(`remove: ${removed.body}`)
      if (i >= WARMUP) { addTimes.push(added.ms); removeTimes.push(removed.ms) }
    }
    const fmt = (name: string, xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b)
      return `${name.padEnd(52)} n=${String(s.length).padStart(4)}  p50 ${percentile(s, 50).toFixed(2).padStart(7)} ms  p99 ${percentile(s, 99).toFixed(2).padStart(7)} ms`
    }
    console.log(`server time per request, one at a time (PostgreSQL, in-process projections)`)
    console.log(fmt('POST /tasks (baseline)', taskTimes))
    console.log(fmt(`GET /routes/{id} with ${ROUTE_TASKS} tasks`, getTimes))
    console.log(fmt(`POST /routes/{id}/tasks, 1 task onto ${ROUTE_TASKS}`, addTimes))
    console.log(fmt(`DELETE /routes/{id}/tasks/{ulid} from ${ROUTE_TASKS + 1}`, removeTimes))
    const p99 = percentile([...addTimes].sort((a, b) => a - b), 99)
    console.log(`add onto ${ROUTE_TASKS}: p99 ${p99.toFixed(2)} ms (goal ≤ 10 ms: ${p99 <= 10 ? 'met' : 'NOT met'})`)
  } finally {
    await close()
  }
}

await main()
