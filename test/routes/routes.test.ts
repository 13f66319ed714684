import t from 'tap'
import { build } from '../helpers/build.js'
import { newAddress, routesWorld } from './fixtures.js'

t.test('routes over HTTP: create, read, add, remove, reorder, capacity, publish, block', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const van = await w.vehicle({ grams: 10_000, packages: 5 })

  t.test('create with driver, vehicle and tasks; the route object of §3.9', async (t) => {
    const a = await w.task({ load: w.load(3000) })
    const b = await w.task({ load: w.load(2000) })
    const res = await w.api('POST', '/routes', { shift_date: '2026-11-26', name: ' Tomorrow ', driver_id: w.driver.id, vehicle_id: van.id, task_ulids: [a.ulid, b.ulid] })
    t.equal(res.statusCode, 201, res.body)
    const { success, route } = res.json()
    t.equal(success, true)
    t.match(route, {
      name: 'Tomorrow', shift_date: '2026-11-26', status: 'draft', driver: { id: w.driver.id, name: 'Dana Driver' }, vehicle: { id: van.id, name: 'Van' },
      load: { grams: 5000, volume_cm3: 0, packages: 2 }, capacity: { grams: 10_000, volume_cm3: null, packages: 5 },
      progress: { total: 2, pending: 2, started: 0, complete: 0, failed: 0, cancelled: 0, percent: 0 },
      blocked_reason: null, published_at: null, started_at: null, finished_at: null,
    })
    t.same(route.tasks.map((x: any) => [x.ulid, x.position, x.type, x.status]), [[a.ulid, 1, 'delivery', 'pending'], [b.ulid, 2, 'delivery', 'pending']])
    t.match(route.tasks[0].address, { street: 'San Martín' })
    const got = await w.api('GET', `/routes/${route.id}`)
    t.equal(got.statusCode, 200)
    t.same(got.json(), route, 'GET at root is the same object')
    const task = (await w.api('GET', `/tasks/${b.ulid}`)).json()
    t.equal(task.route_id, route.id)
    t.equal(task.position, 2)
  })
})

t.test('tasks on a route: positions, the one-route rule, final tasks, capacity per dimension', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const van = await w.vehicle({ grams: 10_000, volume_cm3: 50_000, packages: 3 })
  const route = await w.route({ vehicle_id: van.id })
  const [a, b, c] = [await w.task({ load: w.load(1000) }), await w.task({ load: w.load(1000) }), await w.task({ load: w.load(1000) })]

  const add = (body: unknown, id = route.id) => w.api('POST', `/routes/${id}/tasks`, body)
  t.equal((await add({ task_ulids: [a.ulid, b.ulid] })).statusCode, 200)
  const inserted = await add({ task_ulids: [c.ulid.toLowerCase()], position: 1 })
  t.equal(inserted.statusCode, 200, inserted.body)
  t.same(inserted.json().route.tasks.map((x: any) => x.ulid), [c.ulid, a.ulid, b.ulid], 'position is 1-based; ulids in any case')
  t.same(inserted.json().route, (await w.api('GET', `/routes/${route.id}`)).json(), 'the answer is what a GET shows next')
  for (const [ulid, position] of [[c.ulid, 1], [a.ulid, 2], [b.ulid, 3]] as const) {
    t.equal((await w.api('GET', `/tasks/${ulid}`)).json().position, position, `tasks.position of ${ulid}`)
  }

  t.test('422s name task_ulids.N: unknown, repeated, on this route, on another route, final; position too far', async (t) => {
    const other = await w.route()
    const elsewhere = await w.task()
    t.equal((await add({ task_ulids: [elsewhere.ulid] }, other.id)).statusCode, 200)
    const done = await w.task()
    await w.transition(done.ulid, 'complete', { signed_by: 'Ana' })
    const fresh = await w.task()
    const res = await add({ task_ulids: [fresh.ulid, '01ARZ3NDEKTSV4RRFFQ69G5FAV', fresh.ulid, a.ulid, elsewhere.ulid, done.ulid], position: 9 })
    t.equal(res.statusCode, 422, res.body)
    const errors = res.json().errors
    t.notOk(errors['task_ulids.0'])
    for (const i of [1, 2, 3, 4, 5]) t.ok(errors[`task_ulids.${i}`], `names task_ulids.${i}`)
    t.match(errors['task_ulids.4'][0], new RegExp(`route ${other.id}`))
    t.match(errors['task_ulids.5'][0], /complete/)
    t.ok(errors.position)
    const schema = await add({ task_ulids: ['nope'], position: 0, extra: 1 })
    t.equal(schema.statusCode, 422)
    for (const k of ['task_ulids.0', 'position', 'extra']) t.ok(schema.json().errors[k], `schema names ${k}`)
  })

  t.test('capacity: a fourth package overflows; the 422 names the dimension, the capacity and the peak', async (t) => {
    const d = await w.task({ load: w.load(1000) })
    const res = await add({ task_ulids: [d.ulid] })
    t.equal(res.statusCode, 422, res.body)
    t.match(res.json().errors.task_ulids[0], /packages: capacity 3, peak 4/)
    t.equal((await w.api('GET', `/tasks/${d.ulid}`)).json().route_id, null, 'nothing was routed')
    const heavy = await w.api('PATCH', `/routes/${route.id}`, { vehicle_id: (await w.vehicle({ grams: 2500 })).id })
    t.equal(heavy.statusCode, 422, 'a vehicle change re-checks capacity')
    t.match(heavy.json().errors.task_ulids[0], /grams: capacity 2500, peak 3000/)
  })

  t.test('pickups add where they stand: pickups then deliveries of the same shipments', async (t) => {
    const truck = await w.vehicle({ grams: 1900 })
    const r = await w.route({ vehicle_id: truck.id })
    const p1 = await w.task({ type: 'pickup', shipment_id: w.shipment.id, load: w.load(1500) })
    const d1 = await w.task({ type: 'delivery', shipment_id: w.shipment.id, load: w.load(1500) })
    const other = await w.task({ type: 'delivery', load: w.load(500) })
    const ok = await add({ task_ulids: [other.ulid, p1.ulid, d1.ulid] }, r.id)
    t.equal(ok.statusCode, 200, ok.body)
    t.same(ok.json().route.load, { grams: 1500, volume_cm3: 0, packages: 1 }, 'the 500 g delivery leaves before the pickup loads 1500 g')
    const reorder = await w.api('PUT', `/routes/${r.id}/tasks`, { task_ulids: [p1.ulid, other.ulid, d1.ulid] })
    t.equal(reorder.statusCode, 422, 'picking up before the other delivery leaves carries 2000 g')
    t.match(reorder.json().errors.task_ulids[0], /grams: capacity 1900, peak 2000/)
    const late = await w.api('PUT', `/routes/${r.id}/tasks`, { task_ulids: [d1.ulid, other.ulid, p1.ulid] })
    t.equal(late.statusCode, 422, 'a delivery before its pickup is loaded at the start with the other: 2000 g')
  })

  t.test('remove and reorder', async (t) => {
    const removed = await w.api('DELETE', `/routes/${route.id}/tasks/${c.ulid}`)
    t.equal(removed.statusCode, 200, removed.body)
    t.same(removed.json().route.tasks.map((x: any) => [x.ulid, x.position]), [[a.ulid, 1], [b.ulid, 2]])
    const task = (await w.api('GET', `/tasks/${c.ulid}`)).json()
    t.equal(task.route_id, null)
    t.equal(task.position, null)
    t.equal((await w.api('DELETE', `/routes/${route.id}/tasks/${c.ulid}`)).statusCode, 404, 'not on the route')
    const reordered = await w.api('PUT', `/routes/${route.id}/tasks`, { task_ulids: [b.ulid, a.ulid] })
    t.equal(reordered.statusCode, 200, reordered.body)
    t.same(reordered.json().route.tasks.map((x: any) => x.ulid), [b.ulid, a.ulid])
    t.same(reordered.json().route, (await w.api('GET', `/routes/${route.id}`)).json(), 'the answer is what a GET shows next')
    t.same(removed.json().route.tasks.length, 2)
    t.equal((await w.api('GET', `/tasks/${a.ulid}`)).json().position, 2)
    const bad = await w.api('PUT', `/routes/${route.id}/tasks`, { task_ulids: [b.ulid, c.ulid] })
    t.equal(bad.statusCode, 422)
    t.ok(bad.json().errors['task_ulids.1'], 'a stranger')
    t.ok(bad.json().errors.task_ulids, 'a missing task')
    const events = (await w.api('GET', `/routes/${route.id}/events`)).json().events
    t.same(events.map((e: any) => e.type), ['RouteCreated', 'RouteTasksAdded', 'RouteTasksAdded', 'RouteTaskRemoved', 'RouteTasksReordered'])
    const markers = (await h.platform.store.readStream(`task-${c.ulid}`)).map((e) => e.type)
    t.same(markers.slice(-2), ['TaskRouted', 'TaskUnrouted'], 'the task stream has its markers')
  })
})

t.test('publish (406 per spec), update, block, list, history, tenants', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const route = await w.route({ name: 'North' })
  const publish = (id = route.id) => w.api('POST', `/routes/${id}/publish`)

  const noDriver = await publish()
  t.equal(noDriver.statusCode, 406, noDriver.body)
  t.equal(noDriver.json().code, 'not_acceptable')
  const bad = await w.api('PATCH', `/routes/${route.id}`, { driver_id: w.dispatcher.id, vehicle_id: 'veh_nope', name: '' })
  t.equal(bad.statusCode, 422)
  t.ok(bad.json().errors.name)
  const bad2 = await w.api('PATCH', `/routes/${route.id}`, { driver_id: w.dispatcher.id, vehicle_id: 'veh_nope' })
  t.equal(bad2.statusCode, 422)
  t.ok(bad2.json().errors.driver_id, 'a dispatcher is not a driver')
  t.ok(bad2.json().errors.vehicle_id)
  const patched = await w.api('PATCH', `/routes/${route.id}`, { driver_id: w.driver.id, name: 'North 1' })
  t.equal(patched.statusCode, 200, patched.body)
  t.equal(patched.json().route.name, 'North 1')
  const published = await publish()
  t.equal(published.statusCode, 200, published.body)
  t.equal(published.json().route.status, 'published')
  t.ok(published.json().route.published_at)
  const event = (await h.platform.store.readStream(`route-${route.id}`)).find((e) => e.type === 'RoutePublished')!
  t.equal((event.data as any).driver_id, w.driver.id, 'RoutePublished carries the driver')
  t.equal((await publish()).statusCode, 406, 'already published')

  const blocked = await w.api('POST', `/routes/${route.id}/block`, { reason: 'Van broke down' })
  t.equal(blocked.statusCode, 200)
  t.match(blocked.json().route, { status: 'blocked', blocked_reason: 'Van broke down' })
  t.equal((await w.api('POST', `/routes/${route.id}/tasks`, { task_ulids: [(await w.task()).ulid] })).statusCode, 409, 'no changes while blocked')
  t.equal((await w.api('POST', `/routes/${route.id}/block`, { reason: ' ' })).statusCode, 422)
  const unblocked = await w.api('POST', `/routes/${route.id}/unblock`)
  t.match(unblocked.json().route, { status: 'published', blocked_reason: null })
  t.equal((await w.api('POST', `/routes/${route.id}/unblock`)).statusCode, 409)

  t.test('list: {routes: {data, links, meta}}, perPage default 20, filters', async (t) => {
    for (let i = 0; i < 21; i++) await w.route({ shift_date: '2026-12-01' })
    const page = await w.api('GET', '/routes?shift_date=2026-12-01')
    t.equal(page.statusCode, 200)
    const { routes } = page.json()
    t.equal(routes.data.length, 20)
    t.match(routes.meta, { total: 21, per_page: 20, current_page: 1, last_page: 2 })
    t.ok(routes.links.next)
    t.equal((await w.api('GET', '/routes?status=published')).json().routes.data.length, 1)
    t.equal((await w.api('GET', `/routes?driver_id=${w.driver.id}`)).json().routes.data[0].id, route.id)
    t.equal((await w.api('GET', '/routes?status=nope&shift_date=x')).statusCode, 422)
  })

  t.test('as_of and events', async (t) => {
    const events = (await w.api('GET', `/routes/${route.id}/events`)).json().events
    const created = events[0].recorded_at
    const then = await w.api('GET', `/routes/${route.id}?as_of=${encodeURIComponent(created)}`)
    t.equal(then.statusCode, 200, then.body)
    t.match(then.json(), { name: 'North', status: 'draft', driver: null, published_at: null })
    const beforeBlock = events.find((e: any) => e.type === 'RouteBlocked').recorded_at
    t.match((await w.api('GET', `/routes/${route.id}?as_of=${encodeURIComponent(beforeBlock)}`)).json(), { status: 'blocked', blocked_reason: 'Van broke down' })
    t.equal((await w.api('GET', `/routes/${route.id}?as_of=2000-01-01T00:00:00Z`)).statusCode, 404)
  })

  t.test('another tenant: 404; a shipper-only organization: 403; bad create: 422 naming fields', async (t) => {
    const other = await h.createOrganization({ roles: ['carrier'] })
    for (const [m, p, b] of [['GET', `/routes/${route.id}`], ['GET', `/routes/${route.id}/events`], ['PATCH', `/routes/${route.id}`, { name: 'x' }],
      ['POST', `/routes/${route.id}/publish`], ['POST', `/routes/${route.id}/tasks`, { task_ulids: [(await w.task()).ulid] }],
      ['DELETE', `/routes/${route.id}/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV`], ['PUT', `/routes/${route.id}/tasks`, { task_ulids: [] }],
      ['POST', `/routes/${route.id}/block`, { reason: 'x' }], ['POST', `/routes/${route.id}/unblock`]] as const) {
      const res = await h.call(m, `/api/v1${p}`, { token: other.token, ...(b ? { body: b } : {}) })
      t.equal(res.statusCode, 404, `${m} ${p}: ${res.body}`)
    }
    const shipper = await h.createOrganization({ roles: ['shipper'] })
    t.equal((await h.call('GET', '/api/v1/routes', { token: shipper.token })).statusCode, 403)
    const res = await w.api('POST', '/routes', { shift_date: '2026-11-26', driver_id: 'usr_nope', vehicle_id: 'veh_nope' })
    t.equal(res.statusCode, 422)
    t.equal((await w.api('POST', '/routes', { shift_date: '2026-02-30' })).statusCode, 422, 'a day that does not exist')
    for (const k of ['driver_id', 'vehicle_id']) t.ok(res.json().errors[k], `names ${k}`)
    const schema = await w.api('POST', '/routes', { shift_date: '26/11/2026', name: '', task_ulids: ['x'] })
    t.equal(schema.statusCode, 422)
    for (const k of ['shift_date', 'name', 'task_ulids.0']) t.ok(schema.json().errors[k], `names ${k}`)
    const bad = await w.api('POST', '/routes', { shift_date: '2026-11-26', task_ulids: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] })
    t.equal(bad.statusCode, 422)
    t.ok(bad.json().errors['task_ulids.0'])
    t.equal((await w.api('GET', '/routes/999999')).statusCode, 404)
  })

  t.test('drivers: only published routes they drive, and the tasks on them', async (t) => {
    const task = await w.task()
    await w.api('POST', `/routes/${route.id}/tasks`, { task_ulids: [task.ulid] })
    const draft = await w.route({ driver_id: w.driver.id })
    const as = (path: string) => h.call('GET', `/api/v1${path}`, { token: w.driver.token })
    const list = (await as('/routes')).json().routes.data.map((r: any) => r.id)
    t.same(list, [route.id])
    t.equal((await as(`/routes/${route.id}`)).statusCode, 200)
    t.equal((await as(`/routes/${draft.id}`)).statusCode, 404, 'a draft is not shown to its driver')
    t.equal((await as(`/tasks/${task.ulid}`)).statusCode, 200, 'a task on its published route')
    t.ok((await as('/tasks')).json().data.some((x: any) => x.ulid === task.ulid))
    t.equal((await h.call('POST', '/api/v1/routes', { token: w.driver.token, body: { shift_date: '2026-11-26' } })).statusCode, 403)
    t.equal((await h.call('GET', `/api/v1/routes/${route.id}/events`, { token: w.driver.token })).statusCode, 403)
    t.equal((await w.transition(task.ulid, 'start', undefined, w.driver.token)).statusCode, 200, 'the driver works the task')
    await w.api('DELETE', `/routes/${route.id}/tasks/${task.ulid}`)
    t.equal((await as(`/tasks/${task.ulid}`)).statusCode, 404, 'removed: gone from the driver at once')
  })
})

t.test('a cancelled task stays on its route; a cancelled workflow\'s tasks leave theirs', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const lone = await w.task()
  const wf = await w.api('POST', '/workflows', { blueprint_key: 'pickup-delivery', data: { origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress() } })
  t.equal(wf.statusCode, 201, wf.body)
  const workflow = wf.json().workflow.data
  const pickup = workflow.tasks[0].ulid
  const route = await w.route({ task_ulids: [lone.ulid, pickup] })
  await w.transition(lone.ulid, 'cancel')
  t.match((await w.api('GET', `/routes/${route.id}`)).json(), { tasks: [{ ulid: lone.ulid, status: 'cancelled' }, { ulid: pickup }], progress: { total: 2, cancelled: 1, percent: 50 } })
  t.equal((await w.api('POST', `/workflows/${workflow.id}/cancel`)).statusCode, 200)
  const after = (await w.api('GET', `/routes/${route.id}`)).json()
  t.same(after.tasks.map((x: any) => x.ulid), [lone.ulid], 'the workflow\'s task left the route')
  t.equal((await w.api('GET', `/tasks/${pickup}`)).json().route_id, null)
})
