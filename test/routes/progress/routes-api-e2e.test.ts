import { randomBytes } from 'node:crypto'
import t from 'tap'
import { build } from '../../helpers/build.js'
import { startBackground } from '../../../src/processes/background.js'
import { silentLogger } from '../../../src/infrastructure/bus/bus.js'
import { closeIdleConnections } from '../../../src/notifications/safe-http.js'
import { routesWorld } from '../fixtures.js'
import { listen, openSse, type SseEvent } from './fixtures.js'

// The live progress fed by the real routes module (not by events written straight to the store):
// what the routes API writes is exactly what the route-feed projection reads.

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

const dataOf = (events: SseEvent[], name: string) => events.filter((e) => e.event === name).map((e) => JSON.parse(e.data!))

for (const adapter of ADAPTERS) t.test(`a route built, published and driven through the API streams its progress (${adapter} bus)`, async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000, natsUrl: adapter === 'nats' ? natsUrl : undefined })
  const base = await listen(h.app)
  const w = await routesWorld(h)
  const suffix = randomBytes(4).toString('hex')
  const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `RPE_${suffix}`, subjectPrefix: `rpe${suffix}` } })
  t.equal(bg.bus.kind, adapter)
  t.teardown(() => bg.stop())

  const van = await w.vehicle({ grams: 10_000, volume_cm3: null, packages: null })
  const [a, b] = [await w.task({ load: w.load(2_000) }), await w.task({ load: w.load(3_000) })]
  const made = await w.api('POST', '/routes', { shift_date: '2026-11-26', vehicle_id: van.id, driver_id: w.driver.id, name: 'North' })
  t.equal(made.statusCode, 201, made.body)
  const route = made.json().route
  const added = await w.api('POST', `/routes/${route.id}/tasks`, { task_ulids: [a.ulid, b.ulid] })
  t.equal(added.statusCode, 200, added.body)
  const published = await w.api('POST', `/routes/${route.id}/publish`)
  t.equal(published.statusCode, 200, published.body)

  const auth = { authorization: `Bearer ${w.carrier.token}` }
  const stream = await openSse(`${base}/api/v1/routes/${route.id}/progress/stream`, auth)
  t.equal(stream.status, 200)
  t.teardown(() => stream.close())
  await stream.until((e) => e.some((x) => x.event === 'snapshot'))
  const snapshot = dataOf(stream.events, 'snapshot')[0]
  t.match(snapshot, { route_id: route.id, status: 'published', progress: { total: 2, complete: 0, percent: 0 } })
  t.same(snapshot.tasks.map((x: { ulid: string }) => x.ulid), [a.ulid, b.ulid], 'the tasks in the route\'s order')

  const link = await w.api('POST', `/routes/${route.id}/live-links`, { ttl_minutes: 60 })
  t.equal(link.statusCode, 201, link.body)
  const livePath = new URL(link.json().url).pathname
  const live = await openSse(`${base}${livePath}/stream`)
  t.equal(live.status, 200)
  t.teardown(() => live.close())
  await live.until((e) => e.some((x) => x.event === 'snapshot'))

  // The driver, with the driver's own token, through the task endpoints.
  const started = await w.transition(a.ulid, 'start', undefined, w.driver.token)
  t.equal(started.statusCode, 200, started.body)
  await stream.until((e) => e.some((x) => x.event === 'task.started') && e.some((x) => x.event === 'route.started'))
  t.match(dataOf(stream.events, 'task.started')[0], { task_ulid: a.ulid, position: 1, status: 'started', progress: { total: 2, complete: 0 } })
  t.match(dataOf(stream.events, 'route.started')[0], { route_id: route.id, status: 'started' }, 'route.started comes from the life-cycle consumer')

  const completed = await w.transition(a.ulid, 'complete', { signed_by: 'Ana' }, w.driver.token)
  t.equal(completed.statusCode, 200, completed.body)
  await stream.until((e) => e.some((x) => x.event === 'task.completed'))
  t.match(dataOf(stream.events, 'task.completed')[0], { task_ulid: a.ulid, status: 'complete', progress: { total: 2, complete: 1, percent: 50 } })

  const done = await w.transition(b.ulid, 'complete', { signed_by: 'Bo' }, w.driver.token)
  t.equal(done.statusCode, 200, done.body)
  await stream.until((e) => e.some((x) => x.event === 'route.finished'))
  t.match(dataOf(stream.events, 'task.completed')[1], { task_ulid: b.ulid, progress: { complete: 2, percent: 100 } })
  t.match(dataOf(stream.events, 'route.finished')[0], { status: 'finished' })

  const names = (events: SseEvent[]) => events.filter((e) => e.event && e.event !== 'snapshot').map((e) => e.event)
  await live.until((e) => e.some((x) => x.event === 'route.finished'))
  t.same(names(live.events), names(stream.events), 'the live link\'s stream shows the same changes')
  const ids = stream.events.filter((e) => e.id).map((e) => e.id)
  t.equal(new Set(ids).size, ids.length, 'nothing repeated')

  const progress = (await w.api('GET', `/routes/${route.id}/progress`)).json()
  t.match(progress, { status: 'finished', progress: { total: 2, complete: 2, percent: 100 } })
  const read = (await w.api('GET', `/routes/${route.id}`)).json()
  t.match(read, { status: 'finished' })
})
