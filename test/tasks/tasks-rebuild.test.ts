import { type Kysely } from 'kysely'
import t from 'tap'
import { rebuildReadModels } from '../../src/cli/rebuild.js'
import { readModelChecksums } from '../helpers/read-model-checksums.js'
import { build } from '../helpers/build.js'
import { PNG, tasksWorld, upload } from './fixtures.js'

t.test('the tasks read model is rebuilt from events alone, row for row; Idempotency-Key replays a creation', async (t) => {
  const h = await build(t)
  const w = await tasksWorld(h)
  const a = await w.task({ shipment_id: w.shipment.id, assignee_id: w.driver.id, time_windows: [{ from: '2026-12-01T10:00:00Z', to: '2026-12-01T11:00:00Z' }] })
  const b = await w.task({ address: { place_id: w.place.id }, dependencies: [a.ulid] })
  const c = await w.task()
  t.equal((await upload(h, a.ulid, w.carrier.token, PNG, 'p.png', 'image/png')).statusCode, 201)
  await w.transition(a.ulid, 'complete', { signed_by: 'Ana', barcode: 'PKG-A' })
  await w.transition(b.ulid, 'start')
  await w.transition(b.ulid, 'fail', { reason: 'closed', notes: 'shut' })
  await w.transition(c.ulid, 'cancel')

  const db = h.platform.db as Kysely<any>
  const before = await readModelChecksums(db, ['tasks', 'addresses'])
  t.equal(before.tasks!.split(':')[0], '3')
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 3 })
  t.equal(await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000), true)
  t.same(await readModelChecksums(db, ['tasks', 'addresses']), before)

  const body = { type: 'delivery', address: { place_id: w.place.id } }
  const headers = { 'idempotency-key': 'task-once' }
  const first = await h.call('POST', '/api/v1/tasks', { token: w.carrier.token, body, headers })
  const again = await h.call('POST', '/api/v1/tasks', { token: w.carrier.token, body, headers })
  t.equal(first.statusCode, 201)
  t.equal(again.statusCode, 201)
  t.equal(again.json().task.ulid, first.json().task.ulid, 'the same task, not a second one')
  t.equal((await h.call('GET', '/api/v1/tasks', { token: w.carrier.token })).json().meta.total, 4)
})
