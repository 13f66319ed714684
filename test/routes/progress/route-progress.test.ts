import t from 'tap'
import { build } from '../../helpers/build.js'
import { listen, openSse, progressWorld } from './fixtures.js'

t.test('snapshot: status, progress and tasks in order; follows task changes; access', async (t) => {
  const h = await build(t)
  const w = await progressWorld(h)
  const [a, b, c] = await w.tasks(3)
  const id = await w.route({ tasks: [a!, b!] })
  await w.addTasks(id, [c!], 1)
  const get = (token = w.carrier.token, routeId = id) => h.call('GET', `/api/v1/routes/${routeId}/progress`, { token })

  const first = await get()
  t.equal(first.statusCode, 200, first.body)
  t.match(first.json(), {
    route_id: id, status: 'draft', blocked_reason: null,
    progress: { total: 3, pending: 3, started: 0, complete: 0, failed: 0, cancelled: 0, percent: 0 },
    tasks: [{ ulid: a, position: 1, status: 'pending' }, { ulid: c, position: 2, status: 'pending' }, { ulid: b, position: 3, status: 'pending' }],
  })
  t.ok(first.json().last_event_id > 0)

  t.equal((await w.transition(a!, 'complete', { signed_by: 'Ana' })).statusCode, 200)
  t.equal((await w.transition(c!, 'start')).statusCode, 200)
  const after = (await get()).json()
  t.same(after.progress, { total: 3, pending: 1, started: 1, complete: 1, failed: 0, cancelled: 0, percent: 33 })
  t.same(after.tasks.map((x: any) => x.status), ['complete', 'started', 'pending'])

  await w.removeTask(id, b!)
  await w.routeEvent(id, 'RouteBlocked', { reason: 'flat tyre', blocked_at: new Date().toISOString() })
  const blocked = (await get()).json()
  t.equal(blocked.status, 'blocked')
  t.equal(blocked.blocked_reason, 'flat tyre')
  t.same(blocked.tasks.map((x: any) => x.ulid), [a, c])
  t.equal(blocked.progress.percent, 50)

  t.test('a removed task no longer moves the route', async (t) => {
    const before = (await get()).json()
    t.equal((await w.transition(b!, 'cancel')).statusCode, 200)
    t.same((await get()).json(), before)
  })

  t.test('dispatchers see it; a driver only once published, and only its own; another tenant gets 404', async (t) => {
    t.equal((await get(w.dispatcher.token)).statusCode, 200)
    t.equal((await get(w.driver.token)).statusCode, 404, 'a draft is not the driver\'s yet')
    await w.routeEvent(id, 'RoutePublished', { driver_id: w.driver.id, published_at: new Date().toISOString() })
    t.equal((await get(w.driver.token)).statusCode, 200, 'published: the driver sees it')
    const other = await w.route({ driverId: null, publish: false })
    t.equal((await get(w.driver.token, other)).statusCode, 404, 'a route it does not drive')
    const stranger = await h.createOrganization({ roles: ['carrier'] })
    t.equal((await get(stranger.token)).statusCode, 404)
    t.equal((await h.call('GET', `/api/v1/routes/${id}/progress/stream`, { token: stranger.token })).statusCode, 404)
    t.equal((await get(w.carrier.token, 999_999_999)).statusCode, 404)
    t.equal((await h.call('GET', '/api/v1/routes/abc/progress', { token: w.carrier.token })).statusCode, 422)
    const shipperOnly = await h.createOrganization({ roles: ['shipper'] })
    t.equal((await get(shipperOnly.token)).statusCode, 403)
    t.equal((await h.call('POST', `/api/v1/routes/${id}/live-links`, { token: w.driver.token, body: {} })).statusCode, 403, 'drivers make no links')
  })
})

t.test('the stream over HTTP: snapshot first, then each change as id/event/data; resume with Last-Event-ID; heartbeat', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 300 })
  const base = await listen(h.app)
  const w = await progressWorld(h)
  const [a, b] = await w.tasks(2)
  const id = await w.route({ tasks: [a!, b!], publish: true })
  const url = `${base}/api/v1/routes/${id}/progress/stream`
  const auth = { authorization: `Bearer ${w.carrier.token}` }

  const s = await openSse(url, auth)
  t.equal(s.status, 200)
  t.match(s.headers['content-type'], /^text\/event-stream/)
  const [snap] = await s.until((e) => e.some((x) => x.event === 'snapshot'))
  const snapshot = JSON.parse(s.events.find((x) => x.event === 'snapshot')!.data!)
  t.equal(snapshot.status, 'published')
  t.ok(snap)

  await w.transition(a!, 'start')
  await w.transition(a!, 'complete', { signed_by: 'Ana' })
  const events = await s.until((e) => e.some((x) => x.event === 'task.completed'))
  const named = events.filter((x) => x.event && x.event !== 'snapshot')
  t.same(named.map((x) => x.event), ['task.started', 'task.completed'], 'the task\'s changes in order; the arrival it skipped is no event of its own')
  const done = JSON.parse(named.at(-1)!.data!)
  t.same(done, { route_id: id, task_ulid: a, position: 1, status: 'complete', progress: { total: 2, pending: 1, started: 0, complete: 1, failed: 0, cancelled: 0, percent: 50 } })
  const ids = named.map((x) => Number(x.id))
  t.ok(ids.every((x, i) => i === 0 || x > ids[i - 1]!), 'ids grow')
  t.ok(Number(snap?.id ?? 0) < ids[0]!)

  await s.until((e) => e.some((x) => x.comment === 'heartbeat'), 3000)
  t.pass('a heartbeat comment arrived')
  s.close()

  t.test('resume: after the first id, exactly the rest, none twice, and the live ones after', async (t) => {
    await w.transition(b!, 'fail', { reason: 'no_answer' })
    await w.routeEvent(id, 'RouteFinished', { finished_at: new Date().toISOString() })
    const r = await openSse(url, { ...auth, 'last-event-id': String(ids[0]) })
    const got = await r.until((e) => e.some((x) => x.event === 'route.finished'))
    t.same(got.filter((x) => x.event).map((x) => x.event), ['task.completed', 'task.failed', 'route.finished'], 'nothing lost, nothing repeated, no snapshot')
    t.equal(JSON.parse(got.at(-1)!.data!).status, 'finished')
    await w.routeEvent(id, 'RouteBlocked', { reason: 'late', blocked_at: new Date().toISOString() })
    const more = await r.until((e) => e.some((x) => x.event === 'route.blocked'))
    t.equal(more.filter((x) => x.event === 'task.completed').length, 1)
    t.match(JSON.parse(more.at(-1)!.data!), { status: 'blocked', blocked_reason: 'late', progress: { percent: 100 } })
    r.close()
    const bad = await h.call('GET', `/api/v1/routes/${id}/progress/stream`, { token: w.carrier.token, headers: { 'last-event-id': 'x' } })
    t.equal(bad.statusCode, 422)
    t.ok(bad.json().errors['Last-Event-ID'])
  })
})
