// Route planning over HTTP (issue 13): POST /routes/plan for 1,000 tasks with 2-hour windows over
// 20 vans, against a real PostgreSQL; the time to answer (solver, 20 routes written in one atomic
// append, the projections passed, the routes read back) and the share of tasks placed. The server
// listens on loopback and the request goes over a socket; the tasks are made beforehand by inject.
//
//   bash test/bench/run-all.sh route-plan
//   (or: bash infra/local/start-postgres.sh /tmp/benchpg && set -a && source /tmp/benchpg/env && set +a && npx tsx test/bench/route-plan.bench.ts)
import { inProcessApp } from './in-process-app.js'

const TASKS = Number(process.env['PLAN_BENCH_TASKS'] ?? 1000)
const VANS = Number(process.env['PLAN_BENCH_VANS'] ?? 20)

/** A deterministic spread of points within ~8 km of Córdoba's centre, and windows of 2 h from 08:00 to 18:00 local (UTC−3). */
function taskBody(i: number) {
  const r = (k: number) => { const x = Math.sin(i * 12.9898 + k * 78.233) * 43758.5453; return x - Math.floor(x) }
  const start = Date.parse('2026-12-01T11:00:00Z') + Math.floor(r(3) * 5) * 2 * 3_600_000
  return {
    type: 'delivery',
    address: {
      name: `Recipient ${i}`, street: 'Avenida Colón', street_number: String(100 + i), city: 'Córdoba', state: 'Córdoba', country: 'AR',
      geo_latitude: -31.42 + (r(1) - 0.5) * 0.15, geo_longitude: -64.19 + (r(2) - 0.5) * 0.18,
    },
    time_windows: [{ from: new Date(start).toISOString(), to: new Date(start + 2 * 3_600_000).toISOString() }],
    duration_minutes: 3,
    load: { grams: 2000, volume_cm3: 5000, packages: 1 },
  }
}

async function main(): Promise<void> {
  const { app, call, carrier, close } = await inProcessApp('bench-plan')
  try {
    const token = await carrier('Bench planning')
    const ulids: string[] = []
    for (let i = 0; i < TASKS; i++) {
      const r = await call('POST', '/api/v1/tasks', token, taskBody(i))
      if (r.status !== 201) throw new Error(`task: ${r.body}`)
      ulids.push(JSON.parse(r.body).task.ulid)
    }
    const vans: string[] = []
    for (let i = 0; i < VANS; i++) {
      const r = await call('POST', '/api/v1/vehicles', token, { name: `Van ${i + 1}`, plate: `PLAN ${i + 1}`, capacity: { grams: 200_000, packages: 60 } })
      if (r.status !== 201) throw new Error(`vehicle: ${r.body}`)
      vans.push(JSON.parse(r.body).vehicle.id)
    }
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const t0 = performance.now()
    const res = await fetch(`${address}/api/v1/routes/plan`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ shift_date: '2026-12-01', task_ulids: ulids, vehicle_ids: vans }),
    })
    const text = await res.text()
    const ms = performance.now() - t0
    if (res.status !== 201) throw new Error(`plan: ${res.status} ${text.slice(0, 500)}`)
    const body = JSON.parse(text) as { routes: { tasks: unknown[] }[]; unassigned: { reason: string }[]; plan: { distance_m: number; duration_s: number } }
    const placed = body.routes.reduce((n, r) => n + r.tasks.length, 0)
    const reasons: Record<string, number> = {}
    for (const u of body.unassigned) reasons[u.reason] = (reasons[u.reason] ?? 0) + 1
    console.log(`POST /routes/plan, ${TASKS} tasks (2-hour windows, 3 min each), ${VANS} vans (60 packages each), over a loopback socket, PostgreSQL`)
    console.log(`time to answer ${(ms / 1000).toFixed(2)} s; placed ${placed}/${TASKS} (${((100 * placed) / TASKS).toFixed(1)} %) on ${body.routes.length} routes; unassigned by reason ${JSON.stringify(reasons)}`)
    console.log(`plan: ${(body.plan.distance_m / 1000).toFixed(1)} km, ${(body.plan.duration_s / 3600).toFixed(1)} h of driving; response ${(text.length / 1024).toFixed(0)} KiB`)
  } finally {
    await close()
  }
}

await main()
