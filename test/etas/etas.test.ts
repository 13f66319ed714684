import t from 'tap'
import { sql } from 'kysely'
import { Webhook as Verifier } from 'standardwebhooks'
import { build } from '../helpers/build.js'
import { listen, openSse, type SseEvent } from '../routes/progress/fixtures.js'
import { startReceiver } from '../notifications/fixtures/receiver.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { etaWorld, north, until } from './fixtures.js'

// DESIGN §3.10 end to end: a started route's ETAs are recomputed on a position, a task transition
// and a route change; `task.eta` frames on the progress stream (resumable); TaskDelayed once, again
// only after coming back inside, and its signed `task.delayed` webhook.

t.teardown(() => closeIdleConnections())

const etaFrames = (events: SseEvent[], ulid?: string) =>
  events.filter((e) => e.event === 'task.eta').map((e) => ({ id: e.id!, ...JSON.parse(e.data!) })).filter((d) => ulid === undefined || d.task_ulid === ulid)

t.test('ETAs follow positions, transitions and route changes; task.eta frames resume', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await etaWorld(h)
  t.teardown(() => w.bg?.stop())
  const [a, b, c] = [await w.taskAt(2), await w.taskAt(4), await w.taskAt(6)]
  const id = await w.route([a, b, c])
  t.equal((await w.report([north(0)])).statusCode, 202)
  const before = await w.getRoute(id)
  t.ok(before.tasks.every((x: any) => x.eta === null), 'a published route has no ETAs yet')
  t.equal(before.driver_position.lat, north(0).lat, 'but shows where its driver is')

  t.equal((await w.transition(a, 'start', undefined, w.driver.token)).statusCode, 200)
  await w.started(id)
  const first = await w.routeWhen(id, (r) => r.tasks.every((x: any) => x.eta?.basis === 'position'), 'every open task stated from the position')
  const etaOf = (r: any, ulid: string) => r.tasks.find((x: any) => x.ulid === ulid).eta
  t.ok(Math.abs(Date.parse(etaOf(first, a).at) - (Date.now() + 4 * 60_000)) < 60_000, '2 km at 30 km/h: about four minutes from now')
  t.ok(Date.parse(etaOf(first, a).from) <= Date.parse(etaOf(first, a).at) && Date.parse(etaOf(first, a).at) < Date.parse(etaOf(first, a).to))
  t.ok(Date.parse(etaOf(first, c).to) - Date.parse(etaOf(first, c).at) > Date.parse(etaOf(first, a).to) - Date.parse(etaOf(first, a).at), 'wider further ahead')
  const task = (await w.api('GET', `/tasks/${b}`)).json()
  t.same(task.eta, etaOf(first, b), 'the task object shows the same ETA')

  const stream = await openSse(`${base}/api/v1/routes/${id}/progress/stream`, { authorization: `Bearer ${w.carrier.token}` })
  t.teardown(() => stream.close())
  const [snapshot] = await stream.until((e) => e.some((x) => x.event === 'snapshot'))
  const snap = JSON.parse(snapshot!.data!)
  t.same(snap.tasks.map((x: any) => x.eta), [etaOf(first, a), etaOf(first, b), etaOf(first, c)], 'the snapshot carries the ETAs')
  t.match(snapshot!.id, /^\d+-\d+$/, 'its id names both feeds once the route has ETA frames')

  t.test('a position: the driver went the other way, every ETA moves later', async (t) => {
    t.equal((await w.report([north(-3)])).statusCode, 202)
    const got = await stream.until((e) => etaFrames(e, c).length >= 1)
    const frame = etaFrames(got, c)[0]!
    t.ok(Date.parse(frame.eta.at) - Date.parse(etaOf(first, c).at) > 4 * 60_000, '3 km back: six minutes more')
    t.match(frame, { route_id: id, task_ulid: c, position: 3, status: 'pending', eta: { basis: 'position' }, progress: { total: 3 } })
  })

  t.test('a transition: A done, B and C come earlier (A\'s stop and stay are gone)', async (t) => {
    const seen = etaFrames(stream.events).length
    t.equal((await w.transition(a, 'complete', { signed_by: 'Ana' }, w.driver.token)).statusCode, 200)
    const got = await stream.until((e) => etaFrames(e).length >= seen + 2)
    const later = etaFrames(got).slice(seen)
    t.same(later.map((f) => f.task_ulid).sort(), [b, c].sort())
    const history = await sql<{ arrived_at: Date | null; outcome: string | null }>`
      select arrived_at, outcome from read_model.task_eta_history where task_ulid = ${a}`.execute(h.platform.db)
    await until(async () => (await sql<{ n: number }>`select count(*)::int as n from read_model.task_eta_history where task_ulid = ${a} and outcome = 'complete'`.execute(h.platform.db)).rows[0]!.n > 0, 5000, 'A\'s history fixed')
    t.ok(history.rows.length >= 2, 'A was stated more than once')
  })

  t.test('a route change: C before B; resuming after a task.eta frame gives exactly the frames after it', async (t) => {
    const seen = etaFrames(stream.events).length
    const reorder = await w.api('PUT', `/routes/${id}/tasks`, { task_ulids: [a, c, b] })
    t.equal(reorder.statusCode, 200, reorder.body)
    const got = await stream.until((e) => etaFrames(e).length >= seen + 2 && e.some((x) => x.event === 'tasks.reordered'))
    const frames = etaFrames(got).slice(seen)
    t.same(frames.map((f) => [f.task_ulid, f.position]).sort(), [[b, 3], [c, 2]].sort())
    // Resume after the first task.eta frame: every later frame of both feeds once, none before it.
    const firstEta = got.findIndex((x) => x.event === 'task.eta')
    const resumeFrom = got[firstEta]!.id!
    const after = got.slice(firstEta + 1).filter((x) => x.id !== undefined && x.event !== 'snapshot')
    const resumed = await openSse(`${base}/api/v1/routes/${id}/progress/stream`, { authorization: `Bearer ${w.carrier.token}`, 'last-event-id': resumeFrom })
    t.teardown(() => resumed.close())
    const back = await resumed.until((e) => e.filter((x) => x.event).length >= after.length)
    t.same(back.filter((x) => x.event).map((x) => x.event).sort(), after.map((x) => x.event).sort(), 'the same frames')
    t.same(back.filter((x) => x.event).map((x) => x.data).sort(), after.map((x) => x.data).sort())
    t.equal(back.at(-1)!.id, after.at(-1)!.id, 'ending at the same place')
    const bad = await openSse(`${base}/api/v1/routes/${id}/progress/stream`, { authorization: `Bearer ${w.carrier.token}`, 'last-event-id': '3-x' })
    t.equal(bad.status, 422)
    bad.close()
  })
})

t.test('TaskDelayed once, again only after coming back inside; the task.delayed webhook, signed', async (t) => {
  const h = await build(t, { webhookRetryDelaysMs: [40], webhookTimeoutMs: 3000 })
  const w = await etaWorld(h)
  t.teardown(() => w.bg?.stop())
  const rx = await startReceiver(t)
  const hook = (await w.api('POST', '/webhooks', { url: rx.url, events: ['task.delayed'] })).json()
  const now = Date.now()
  // Ten kilometres away (twenty minutes at 30 km/h) with a window closing in two minutes.
  const late = await w.taskAt(10, { time_windows: [{ from: new Date(now - 3600_000).toISOString(), to: new Date(now + 2 * 60_000).toISOString() }] })
  const other = await w.taskAt(1)
  const id = await w.route([other, late])
  await w.report([north(0)])
  t.equal((await w.transition(other, 'start', undefined, w.driver.token)).statusCode, 200)
  await w.started(id)
  t.equal((await w.transition(other, 'complete', { signed_by: 'Ana' }, w.driver.token)).statusCode, 200)
  const delays = async () => (await w.api('GET', `/tasks/${late}/events`)).json().events.filter((e: any) => e.type === 'TaskDelayed')
  await until(async () => (await delays()).length === 1, 15_000, 'TaskDelayed')
  const [d] = await delays()
  t.match(d.data, { ulid: late, route_id: id, status: 'pending', window_to: new Date(now + 2 * 60_000).toISOString() })
  t.ok(Date.parse(d.data.eta) > now + 15 * 60_000, `the ETA that passed the window (${d.data.eta})`)
  t.ok(d.data.minutes_late >= 10, `late by ${d.data.minutes_late} minutes`)
  t.equal(d.metadata.actor.kind, 'system')

  // Still late at every position: told once.
  for (let i = 0; i < 3; i++) { await w.report([north(0.1 * i)]); await new Promise((r) => setTimeout(r, 150)) }
  await new Promise((r) => setTimeout(r, 500))
  t.equal((await delays()).length, 1, 'once while it stays late')

  // Next to the stop: back inside the window; then far away again: late again, told again.
  await w.report([north(10)])
  await until(async () => (await sql<{ n: number }>`select count(*)::int as n from read_model.task_etas where ulid = ${late} and back_inside_at is not null`.execute(h.platform.db)).rows[0]!.n === 1, 10_000, 'back inside')
  await w.report([north(-5)])
  await until(async () => (await delays()).length === 2, 15_000, 'a second TaskDelayed')

  await until(() => rx.received.length >= 2, 10_000, 'two task.delayed webhooks')
  const bodies = rx.received.map((r) => new Verifier(hook.secret).verify(r.body, r.headers) as any)
  t.same(bodies.map((b) => b.type), ['task.delayed', 'task.delayed'])
  t.match(bodies[0].data, { ulid: late, status: 'pending', route_id: id, window_to: d.data.window_to, minutes_late: d.data.minutes_late })
  t.notOk('organization_id' in bodies[0].data)
  const log = (await w.api('GET', `/webhooks/${hook.webhook.id}/deliveries`)).json()
  await until(async () => (await w.api('GET', `/webhooks/${hook.webhook.id}/deliveries`)).json().data.every((x: any) => x.status === 'delivered'), 5000, 'logged as delivered')
  t.ok(log.data.length >= 2, 'each one in the delivery log')
})
