import t from 'tap'
import { build } from '../../helpers/build.js'
import { secondConnection } from '../../helpers/test-database.js'
import { createPlatform } from '../../../src/platform.js'
import { buildApp } from '../../../src/http/app.js'
import { modules } from '../../../src/modules.js'
import { listen, openSse, progressWorld } from './fixtures.js'

t.test('a change made through a second API process reaches a stream held by the first', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  // Another process: its own connections (on PostgreSQL), its own runner, caches and hub.
  const database = await secondConnection(t, h.platform.database as typeof h.platform.database & { url?: string })
  const second = await createPlatform(h.platform.config, { database })
  const app2 = await buildApp(second, { logger: false, modules })
  t.teardown(async () => { await app2.close(); await second.close() })

  const [a, b, c] = await w.tasks(3)
  const id = await w.route({ tasks: [a!, b!, c!], publish: true })
  const streams = await Promise.all([1, 2, 3].map(() => openSse(`${base}/api/v1/routes/${id}/progress/stream`, { authorization: `Bearer ${w.carrier.token}` })))
  for (const s of streams) await s.until((e) => e.some((x) => x.event === 'snapshot'))

  const via2 = (ulid: string, action: string, body: unknown = {}) =>
    app2.inject({ method: 'POST', url: `/api/v1/tasks/${ulid}/${action}`, headers: { authorization: `Bearer ${w.carrier.token}` }, payload: body as any })
  t.equal((await via2(a!, 'start')).statusCode, 200)
  t.equal((await via2(a!, 'complete', { signed_by: 'Ana' })).statusCode, 200)
  t.equal((await via2(b!, 'cancel')).statusCode, 200)
  for (const s of streams) {
    const got = await s.until((e) => e.some((x) => x.event === 'task.cancelled'))
    t.same(got.filter((x) => x.event !== undefined && x.event !== 'snapshot').map((x) => [x.event, JSON.parse(x.data!).task_ulid]),
      [['task.started', a], ['task.completed', a], ['task.cancelled', b]], 'each of the three streams: every change once, in order')
    t.equal(JSON.parse(got.at(-1)!.data!).progress.percent, 66)
  }
  for (const s of streams) s.close()

  t.test('the second process serves the same feed: snapshot and resume agree', async (t) => {
    const snap2 = await app2.inject({ method: 'GET', url: `/api/v1/routes/${id}/progress`, headers: { authorization: `Bearer ${w.carrier.token}` } })
    const snap1 = await h.call('GET', `/api/v1/routes/${id}/progress`, { token: w.carrier.token })
    t.same(JSON.parse(snap2.body), snap1.json())
  })
})

t.test('drivers: the stream of a route they drive once published; another\'s route or a draft is a 404', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const [a] = await w.tasks(1)
  const draft = await w.route({ tasks: [a!] })
  const url = (id: number) => `${base}/api/v1/routes/${id}/progress/stream`
  const asDriver = { authorization: `Bearer ${w.driver.token}` }
  const refused = await openSse(url(draft), asDriver)
  t.equal(refused.status, 404, 'a draft')
  refused.close()
  await w.routeEvent(draft, 'RoutePublished', { driver_id: w.driver.id, published_at: new Date().toISOString() })
  const s = await openSse(url(draft), asDriver)
  t.equal(s.status, 200)
  await s.until((e) => e.some((x) => x.event === 'snapshot'))
  // Started with the organization's token: a driver's reach over the tasks of its routes is the routes module's.
  t.equal((await w.transition(a!, 'start')).statusCode, 200)
  await s.until((e) => e.some((x) => x.event === 'task.started'))
  const dispatcherStream = await openSse(url(draft), { authorization: `Bearer ${w.dispatcher.token}` })
  await dispatcherStream.until((e) => e.some((x) => x.event === 'snapshot'))
  await w.routeEvent(draft, 'RouteUpdated', { driver_id: w.dispatcher.id, updated_at: new Date().toISOString() })
  await s.ended
  t.pass('the route went to another driver: the old driver\'s stream ended')
  await dispatcherStream.until((e) => e.some((x) => x.event === 'route.updated'))
  t.notOk(await Promise.race([dispatcherStream.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]), 'the organization\'s stream goes on')
  dispatcherStream.close()
  t.equal((await h.call('GET', `/api/v1/routes/${draft}/progress`, { token: w.driver.token })).statusCode, 404)
  const othersRoute = await w.route({ driverId: null, publish: false })
  const other = await openSse(url(othersRoute), asDriver)
  t.equal(other.status, 404)
  other.close()
  const stranger = await h.createOrganization({ roles: ['carrier'] })
  const foreign = await openSse(url(draft), { authorization: `Bearer ${stranger.token}` })
  t.equal(foreign.status, 404)
  foreign.close()
  const none = await openSse(url(draft))
  t.equal(none.status, 401)
  none.close()
})
