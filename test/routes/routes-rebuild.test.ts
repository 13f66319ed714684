import { type Kysely } from 'kysely'
import t from 'tap'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { readModelChecksums } from '../helpers/read-model-checksums.js'
import { build } from '../helpers/build.js'
import { routesWorld } from './fixtures.js'

t.test('the routes read model (and tasks.route_id/position) is rebuilt from events alone, row for row', async (t) => {
  const h = await build(t)
  const w = await routesWorld(h)
  const van = await w.vehicle({ grams: 100_000 })
  const [a, b, c, d, e] = [await w.task(), await w.task({ type: 'pickup', shipment_id: w.shipment.id }), await w.task(), await w.task(), await w.task()]
  const route = await w.route({ name: 'R', vehicle_id: van.id, driver_id: w.driver.id, task_ulids: [a.ulid, b.ulid, c.ulid] })
  await w.api('POST', `/routes/${route.id}/tasks`, { task_ulids: [d.ulid], position: 2 })
  await w.api('DELETE', `/routes/${route.id}/tasks/${a.ulid}`)
  await w.api('PUT', `/routes/${route.id}/tasks`, { task_ulids: [c.ulid, b.ulid, d.ulid] })
  await w.api('POST', `/routes/${route.id}/publish`)
  await w.transition(c.ulid, 'start')
  await w.api('POST', `/routes/${route.id}/block`, { reason: 'rain' })
  const other = await w.route({ task_ulids: [a.ulid, e.ulid] })
  await w.transition(e.ulid, 'complete', { signed_by: 'x' })
  await w.api('PATCH', `/routes/${other.id}`, { name: 'Other', vehicle_id: van.id })

  const before = { route: (await w.api('GET', `/routes/${route.id}`)).json(), other: (await w.api('GET', `/routes/${other.id}`)).json() }
  t.same(before.route.tasks.map((x: any) => [x.ulid, x.position, x.status]), [[c.ulid, 1, 'started'], [b.ulid, 2, 'pending'], [d.ulid, 3, 'pending']])
  const db = h.platform.db as Kysely<any>
  const tables = ['routes', 'route_tasks', 'tasks']
  const sums = await readModelChecksums(db, tables)
  t.equal(sums.route_tasks!.split(':')[0], '5')
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 3 })
  t.equal(await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000), true)
  t.same(await readModelChecksums(db, tables), sums, 'every row as it was')
  t.same((await w.api('GET', `/routes/${route.id}`)).json(), before.route)
  t.same((await w.api('GET', `/routes/${other.id}`)).json(), before.other)
})
