import t from 'tap'
import { build } from '../helpers/build.js'
import { newAddress, routesWorld } from './fixtures.js'

// Points east along one street of Córdoba: 0.01° of longitude ≈ 950 m (≈ 114 s at 30 km/h).
const LAT = -31.42
const at = (k: number) => newAddress({ city: 'Córdoba', state: 'Córdoba', geo_latitude: LAT, geo_longitude: -64.2 + 0.01 * k })
const SPEED_KMH = 30

/** An independent check of a sequence: haversine (own formula) at the configured speed, waiting for a window's start, never past its end. */
function lateStops(tasks: { ulid: string; address: { geo_latitude: number; geo_longitude: number }; time_windows: { from: string; to: string }[] }[], serviceS: number): string[] {
  const rad = Math.PI / 180
  const metres = (a: typeof tasks[0]['address'], b: typeof tasks[0]['address']) => {
    const h = Math.sin((b.geo_latitude - a.geo_latitude) * rad / 2) ** 2
      + Math.cos(a.geo_latitude * rad) * Math.cos(b.geo_latitude * rad) * Math.sin((b.geo_longitude - a.geo_longitude) * rad / 2) ** 2
    return 2 * 6_371_000 * Math.asin(Math.sqrt(h))
  }
  const late: string[] = []
  let clock = -Infinity
  tasks.forEach((task, i) => {
    const arrive = i === 0 ? -Infinity : clock + serviceS + metres(tasks[i - 1]!.address, task.address) / (SPEED_KMH / 3.6)
    const windows = task.time_windows.map((w) => [Date.parse(w.from) / 1000, Date.parse(w.to) / 1000] as const)
    // A second of slack per leg: the solver rounds travel to whole seconds.
    const w = windows.find(([, to]) => arrive <= to + 1)
    if (!w) late.push(task.ulid)
    clock = Math.max(arrive, w ? w[0] : arrive)
  })
  return late
}

t.test('planning over HTTP: optimize a route, plan a day', async (t) => {
  const h = await build(t, { routingSpeedKmh: SPEED_KMH })
  const w = await routesWorld(h)
  const window = (k: number) => [{ from: new Date(Date.parse('2026-11-26T11:00:00Z') + k * 20 * 60_000).toISOString(), to: new Date(Date.parse('2026-11-26T11:10:00Z') + k * 20 * 60_000).toISOString() }]

  t.test('optimize puts a scrambled route into an order that meets every window', async (t) => {
    const van = await w.vehicle({ grams: 100_000 })
    const tasks: any[] = []
    for (const k of [0, 1, 2, 3, 4]) tasks.push(await w.task({ address: at(k * 2), time_windows: window(k), duration_minutes: 5, load: w.load(1000) }))
    const scrambled = [3, 0, 4, 1, 2].map((k) => tasks[k]!.ulid)
    const route = await w.route({ vehicle_id: van.id, task_ulids: scrambled })
    t.not(lateStops(route.tasks, 300).length, 0, 'the scrambled order misses windows')
    const res = await w.api('POST', `/routes/${route.id}/optimize`, {})
    t.equal(res.statusCode, 200, res.body)
    const body = res.json()
    t.same(body.plan.violations, [])
    t.ok(body.plan.distance_m > 0 && body.plan.duration_s > 0)
    t.same(lateStops(body.route.tasks, 300), [], 'every service starts inside its window')
    t.same(body.route.tasks.map((x: { ulid: string }) => x.ulid), tasks.map((x) => x.ulid))
    const again = await w.api('GET', `/routes/${route.id}`)
    t.same(again.json().tasks.map((x: { ulid: string }) => x.ulid), tasks.map((x) => x.ulid), 'the order is stored')
  })

  t.test('pickup before its delivery, capacity kept, start address used', async (t) => {
    const van = await w.vehicle({ grams: 7000 })
    const delivery = await w.task({ type: 'delivery', shipment_id: w.shipment.id, address: at(0), load: w.load(4000) })
    const pickup = await w.task({ type: 'pickup', shipment_id: w.shipment.id, address: at(6), load: w.load(4000) })
    const other = await w.task({ type: 'delivery', address: at(1), load: w.load(3000) })
    const route = await w.route({ vehicle_id: van.id, start_address: at(0), task_ulids: [pickup.ulid, other.ulid, delivery.ulid] })
    const res = await w.api('POST', `/routes/${route.id}/optimize`, { objective: 'distance' })
    t.equal(res.statusCode, 200, res.body)
    const order: string[] = res.json().route.tasks.map((x: { ulid: string }) => x.ulid)
    t.ok(order.indexOf(pickup.ulid) < order.indexOf(delivery.ulid), 'the pickup comes first although its delivery stands at the start')
    t.ok(res.json().route.load.grams <= 7000, 'within capacity')
    t.same(res.json().plan.violations, [])
  })

  t.test('capacity shapes the order: the van unloads before it collects', async (t) => {
    const van = await w.vehicle({ grams: 7000 })
    const pickup = await w.task({ type: 'pickup', address: at(0.5), load: w.load(4000) })
    const d = await w.task({ type: 'delivery', address: at(5), load: w.load(3000) })
    const e = await w.task({ type: 'delivery', address: at(6), load: w.load(3000) })
    // Both deliveries are on board at the start (6,000 g): collecting first would carry 10,000 g.
    const route = await w.route({ vehicle_id: van.id, start_address: at(0), task_ulids: [d.ulid, pickup.ulid, e.ulid] })
    const res = await w.api('POST', `/routes/${route.id}/optimize`, { objective: 'distance' })
    t.equal(res.statusCode, 200, res.body)
    const order: string[] = res.json().route.tasks.map((x: { ulid: string }) => x.ulid)
    t.equal(order[2], pickup.ulid, 'the nearby pickup waits until both deliveries are off (the shortest order within 7,000 g)')
    t.equal(res.json().route.load.grams, 6000, 'the peak is the start')
  })

  t.test('an impossible window is a violation; every task stays on the route', async (t) => {
    const a = await w.task({ address: at(0) })
    const b = await w.task({ address: at(1), time_windows: [{ from: '2026-12-24T10:00:00Z', to: '2026-12-24T11:00:00Z' }] })
    const route = await w.route({ task_ulids: [b.ulid, a.ulid] })
    const res = await w.api('POST', `/routes/${route.id}/optimize`, {})
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json().plan.violations, [{ task_ulid: b.ulid, reason: 'shift' }])
    t.same(res.json().route.tasks.map((x: { ulid: string }) => x.ulid), [a.ulid, b.ulid], 'kept, after the rest')
  })

  t.test('empty route: a no-op; other tenant 404; shipper and driver 403', async (t) => {
    const route = await w.route()
    const res = await w.api('POST', `/routes/${route.id}/optimize`, {})
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json().plan, { distance_m: 0, duration_s: 0, violations: [] })
    t.same(res.json().route.tasks, [])
    const other = await h.createOrganization({ roles: ['carrier'], currency: 'ARS' })
    t.equal((await w.api('POST', `/routes/${route.id}/optimize`, {}, other.token)).statusCode, 404)
    t.equal((await w.api('POST', '/routes/999999/optimize', {})).statusCode, 404)
    t.equal((await w.api('POST', `/routes/${route.id}/optimize`, {}, w.shipper.token)).statusCode, 403)
    t.equal((await w.api('POST', `/routes/${route.id}/optimize`, {}, w.driver.token)).statusCode, 403)
    t.equal((await w.api('POST', '/routes/plan', { shift_date: '2026-11-26', task_ulids: [], vehicle_ids: [] }, w.driver.token)).statusCode, 403)
    t.equal((await w.api('POST', `/routes/${route.id}/optimize`, { objective: 'fastest' })).statusCode, 422)
    t.equal((await w.api('POST', `/routes/${route.id}/block`, { reason: 'van broke down' })).statusCode, 200)
    const blocked = await w.api('POST', `/routes/${route.id}/optimize`, {})
    t.equal(blocked.statusCode, 409)
    t.equal(blocked.json().code, 'route_blocked', 'the reorder\'s own refusal')
  })

  t.test('a started route keeps its finished tasks first and moves only the open ones', async (t) => {
    const tasks: any[] = []
    for (const k of [0, 1, 2, 3]) tasks.push(await w.task({ address: at(k * 2), time_windows: window(k) }))
    const route = await w.route({ driver_id: w.driver.id, task_ulids: [tasks[2]!.ulid, tasks[3]!.ulid, tasks[0]!.ulid, tasks[1]!.ulid] })
    t.equal((await w.api('POST', `/routes/${route.id}/publish`)).statusCode, 200)
    t.equal((await w.transition(tasks[2]!.ulid, 'start')).statusCode, 200)
    t.equal((await w.transition(tasks[2]!.ulid, 'complete')).statusCode, 200)
    const res = await w.api('POST', `/routes/${route.id}/optimize`, {})
    t.equal(res.statusCode, 200, res.body)
    const order = res.json().route.tasks.map((x: { ulid: string }) => x.ulid)
    t.equal(order[0], tasks[2]!.ulid, 'the complete task stays first')
    t.same(order.slice(1).sort(), [tasks[0]!.ulid, tasks[1]!.ulid, tasks[3]!.ulid].sort())
  })

  t.test('plan splits tasks over vehicles within capacity, reports the impossible one, creates draft routes', async (t) => {
    const a = await w.vehicle({ packages: 5 }, 'Van A')
    const b = await w.vehicle({ packages: 5 }, 'Van B')
    const tasks: any[] = []
    for (let k = 0; k < 8; k++) tasks.push(await w.task({ address: at(k), load: w.load(100, 0, 1), time_windows: [{ from: '2026-11-27T11:00:00Z', to: '2026-11-27T20:00:00Z' }], duration_minutes: 10 }))
    const heavy = await w.task({ address: at(3), load: w.load(100, 0, 50) })
    const res = await w.api('POST', '/routes/plan', {
      shift_date: '2026-11-27', task_ulids: [...tasks.map((x) => x.ulid), heavy.ulid], vehicle_ids: [a.id, b.id], driver_ids: [w.driver.id],
    })
    t.equal(res.statusCode, 201, res.body)
    const body = res.json()
    t.same(body.unassigned, [{ task_ulid: heavy.ulid, reason: 'capacity' }])
    t.equal(body.routes.length, 2, 'both vans are needed')
    const placed = body.routes.flatMap((r: { tasks: { ulid: string }[] }) => r.tasks.map((x) => x.ulid)).sort()
    t.same(placed, tasks.map((x) => x.ulid).sort(), 'every other task placed once')
    for (const r of body.routes) {
      t.equal(r.status, 'draft')
      t.equal(r.shift_date, '2026-11-27')
      t.ok(r.load.packages <= 5, 'within the van\'s capacity')
    }
    const withDriver = body.routes.find((r: { vehicle: { id: string } }) => r.vehicle.id === a.id)
    t.equal(withDriver.driver.id, w.driver.id, 'driver 0 drives vehicle 0')
    t.ok(body.plan.distance_m > 0)
    const listed = (await w.api('GET', '/routes?shift_date=2026-11-27')).json().routes.data
    t.same(listed.map((r: { id: number }) => r.id).sort(), body.routes.map((r: { id: number }) => r.id).sort(), 'readable by GET /routes')
    const again = await w.api('POST', '/routes/plan', { shift_date: '2026-11-27', task_ulids: [tasks[0]!.ulid], vehicle_ids: [a.id] })
    t.equal(again.statusCode, 422)
    t.match(again.json().errors, { 'task_ulids.0': [/already on route/] })
  })

  t.test('plan: 422 naming fields', async (t) => {
    const van = await w.vehicle({ packages: 5 })
    const ok = await w.task({ address: at(1) })
    const cancelled = await w.task({ address: at(2) })
    t.equal((await w.transition(cancelled.ulid, 'cancel', { reason: 'no longer needed' })).statusCode, 200)
    const res = await w.api('POST', '/routes/plan', {
      shift_date: '2026-11-27', task_ulids: [ok.ulid, '01ARZ3NDEKTSV4RRFFQ69G5FAV', cancelled.ulid, ok.ulid], vehicle_ids: [van.id, 'nope', van.id],
      driver_ids: [w.dispatcher.id],
    })
    t.equal(res.statusCode, 422, res.body)
    t.same(Object.keys(res.json().errors).sort(), ['driver_ids.0', 'task_ulids.1', 'task_ulids.2', 'task_ulids.3', 'vehicle_ids.1', 'vehicle_ids.2'])
    const badDate = await w.api('POST', '/routes/plan', { shift_date: '2026-02-30', task_ulids: [ok.ulid], vehicle_ids: [van.id] })
    t.match(badDate.json().errors, { shift_date: [/./] }, badDate.body)
    const tooMany = await w.api('POST', '/routes/plan', { shift_date: '2026-11-27', task_ulids: Array.from({ length: 1001 }, () => ok.ulid), vehicle_ids: [van.id] })
    t.equal(tooMany.statusCode, 422)
    t.ok(Object.keys(tooMany.json().errors).some((k) => k.startsWith('task_ulids')), tooMany.body)
    // Every address is geocoded now (a town the gazetteer lacks gets its state's centre); a task kept from before may have no point.
    const old = await w.task({ address: at(3) })
    const row = await h.platform.rm.selectFrom('tasks').select('address').where('ulid', '=', old.ulid).executeTakeFirstOrThrow()
    const address = { ...(typeof row.address === 'string' ? JSON.parse(row.address) : row.address), geo_latitude: null, geo_longitude: null }
    await h.platform.rm.updateTable('tasks').set({ address: JSON.stringify(address) }).where('ulid', '=', old.ulid).execute()
    // DESIGN §3.10: a task with nowhere to drive to is reported, not refused; the rest of the day is planned.
    const noPoint = await w.api('POST', '/routes/plan', { shift_date: '2026-11-27', task_ulids: [old.ulid], vehicle_ids: [van.id] })
    t.equal(noPoint.statusCode, 201, noPoint.body)
    t.same(noPoint.json().unassigned, [{ task_ulid: old.ulid, reason: 'no_coordinates' }])
    t.same(noPoint.json().routes, [])
    const route = await w.route({ task_ulids: [ok.ulid, old.ulid] })
    const optimize = await w.api('POST', `/routes/${route.id}/optimize`, {})
    t.equal(optimize.statusCode, 422, optimize.body)
    t.match(optimize.json().errors, { 'tasks.1': [new RegExp(old.ulid)] })
    const tooManyDrivers = await w.api('POST', '/routes/plan', { shift_date: '2026-11-27', task_ulids: [ok.ulid], vehicle_ids: [van.id], driver_ids: [w.driver.id, w.driver.id] })
    t.match(tooManyDrivers.json().errors, { driver_ids: [/one driver per vehicle/] })
  })
})
