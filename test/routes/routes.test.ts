import t from 'tap'
import { build } from '../helpers/build.js'
import { routesWorld } from './fixtures.js'

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
