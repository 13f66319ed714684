import { type Kysely } from 'kysely'
import t from 'tap'
import { rebuildReadModels } from '../../../src/cli/rebuild.js'
import { readModelChecksums } from '../../helpers/read-model-checksums.js'
import { build } from '../../helpers/build.js'
import { progressWorld } from './fixtures.js'

const TABLES = ['route_feed', 'route_feed_routes', 'route_feed_tasks']

t.test('the route feed: events it cannot place are skipped, and a rebuild in other batches gives the same rows and ids', async (t) => {
  const h = await build(t)
  const w = await progressWorld(h)
  const [a, b, c] = await w.tasks(3)
  const id = await w.route({ tasks: [a!, b!], publish: true })
  // An event of a route that was never created, and a task id nobody made: skipped, the runner goes on.
  await w.routeEvent(987_654_321, 'RouteStarted', { task_ulid: a, started_at: new Date().toISOString() })
  await w.addTasks(id, ['01UNKNOWNTASK0000000000000'], 2)
  await w.addTasks(id, [c!], 0)
  await w.transition(a!, 'complete', { signed_by: 'Ana' })
  await w.transition(c!, 'start')
  await w.removeTask(id, b!)
  await w.transition(b!, 'cancel')
  await w.routeEvent(id, 'RouteTasksReordered', { task_ulids: ['01UNKNOWNTASK0000000000000', a, c], reordered_at: new Date().toISOString() })
  await w.routeEvent(id, 'RouteBlocked', { reason: 'rain', blocked_at: new Date().toISOString() })
  await w.routeEvent(id, 'RouteUnblocked', { unblocked_at: new Date().toISOString() })

  const snap = (await h.call('GET', `/api/v1/routes/${id}/progress`, { token: w.carrier.token })).json()
  t.same(snap.tasks.map((x: any) => [x.ulid, x.status]), [['01UNKNOWNTASK0000000000000', 'pending'], [a, 'complete'], [c, 'started']])
  t.equal(snap.status, 'published')
  const feed = await h.platform.rm.selectFrom('route_feed').select(['seq', 'event']).where('route_id', '=', id).orderBy('seq').execute()
  t.same(feed.map((r) => r.event), [
    'task.added', 'task.added', 'route.published', 'task.added', 'task.added', 'task.completed', 'task.started',
    'task.removed', 'tasks.reordered', 'route.blocked', 'route.unblocked',
  ], 'one row per change; the removed task\'s cancel is not the route\'s')
  t.same(feed.map((r) => Number(r.seq)), feed.map((_, i) => i + 1), 'ids 1, 2, 3… in log order')

  const db = h.platform.db as Kysely<any>
  const before = await readModelChecksums(db, TABLES)
  await rebuildReadModels({ database: h.platform.database, store: h.platform.store, batchSize: 2 })
  t.equal(await h.platform.projections.waitFor(await h.platform.store.headPosition(), 10_000), true)
  t.same(await readModelChecksums(db, TABLES), before, 'the same rows, the same ids')
})
