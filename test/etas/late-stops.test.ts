import t from 'tap'
import { build } from '../helpers/build.js'
import { listen, openSse } from '../routes/progress/fixtures.js'
import { etaWorld, north } from './fixtures.js'

// Issue 37, "lateness in the API": a task's eta says whether it is late against its window, by how
// much and since when; the route counts its late stops; TaskDelayed (webhook task.delayed) carries
// the same names, and TaskBackOnTime (task.back_on_time) follows when the ETA comes back inside;
// the progress stream's task.eta frames and snapshot carry them; the OpenAPI document names them.

/** Polls until `get` gives something (a condition, never a fixed sleep). */
async function waitFor<T>(get: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await get()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const isoIn = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString()

t.test('a stop predicted after its window closes is late, counted, told, and back on time when the driver catches up', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const w = await etaWorld(h)
  // On time: a wide window. Late: 20 km away at 30 km/h (some 40 minutes) with a window closing in 12.
  const onTime = await w.taskAt(1, { time_windows: [{ from: isoIn(-60), to: isoIn(240) }] })
  const late = await w.taskAt(20, { time_windows: [{ from: isoIn(-60), to: isoIn(12) }] })
  const noWindow = await w.taskAt(21)
  const id = await w.route([onTime, late, noWindow])
  // The stream is open before any ETA is stated: the late one comes as a task.eta frame.
  const auth = { authorization: `Bearer ${w.carrier.token}` }
  const stream = await openSse(`${base}/api/v1/routes/${id}/progress/stream`, auth)
  t.teardown(() => stream.close())
  await stream.until((e) => e.some((x) => x.event === 'snapshot'))
  t.equal((await w.report([north(0)])).statusCode, 202)
  t.equal((await w.transition(onTime, 'start', undefined, w.driver.token)).statusCode, 200)
  await w.started(id)

  const r = await w.routeWhen(id, (x) => x.tasks[1].eta?.late === true && x.tasks[0].eta !== null, 'the far stop late')
  const eta = r.tasks[1].eta
  t.ok(eta.late_by_minutes >= 20 && eta.late_by_minutes <= 40, `late by some 28 minutes: ${eta.late_by_minutes}`)
  t.equal(eta.late_by_minutes, Math.round((Date.parse(eta.at) - Date.parse(eta.window.to)) / 60_000), 'measured against the window it names')
  t.ok(Date.parse(eta.late_since) <= Date.parse(eta.computed_at), 'late since a computation')
  t.match(r.tasks[0].eta, { late: false, late_by_minutes: null, late_since: null }, 'the near stop is on time')
  t.match(r.tasks[2].eta, { window: null, late: false, late_by_minutes: null }, 'no window: never late')
  t.equal(r.late_stops, 1, 'the route counts its late stop')
  const task = (await w.api('GET', `/tasks/${late}`)).json()
  t.same(task.eta, eta, 'the task object says the same')
  const snap = (await w.api('GET', `/routes/${id}/progress`)).json()
  t.equal(snap.late_stops, 1, 'the progress snapshot counts it')
  t.same(snap.tasks[1].eta, eta)
  const frames = await stream.until((e) => e.some((x) => x.event === 'task.eta' && JSON.parse(x.data!).task_ulid === late && JSON.parse(x.data!).eta.late), 15_000)
  const frame = JSON.parse(frames.filter((x) => x.event === 'task.eta' && JSON.parse(x.data!).task_ulid === late).pop()!.data!)
  t.match(frame.eta, { late: true, late_by_minutes: Number, late_since: String, window: { to: eta.window.to } }, 'the stream\'s task.eta frame carries it')

  // TaskDelayed (DELAY_THRESHOLD_MINUTES 10) with the eta's names.
  const delayedEvent = await waitFor(async () => (await h.platform.store.readStream(`task-${late}`)).find((e) => e.type === 'TaskDelayed'), 'TaskDelayed')
  t.match(delayedEvent.data, { late_by_minutes: Number, late_since: String, minutes_late: Number })
  t.equal((delayedEvent.data as any).late_by_minutes, (delayedEvent.data as any).minutes_late)
  t.notOk((await h.platform.store.readStream(`task-${onTime}`)).some((e) => e.type === 'TaskDelayed'), 'not the stop on time')

  // The driver finishes the near stop and turns up next to the late one: its ETA comes back inside the window.
  t.equal((await w.transition(onTime, 'complete', { signed_by: 'Ana' }, w.driver.token)).statusCode, 200)
  t.equal((await w.report([north(19.9)])).statusCode, 202)
  const back = await w.routeWhen(id, (x) => x.tasks[1].eta !== null && x.tasks[1].eta.late === false, 'back inside')
  t.match(back.tasks[1].eta, { late: false, late_by_minutes: null, late_since: null })
  t.equal(back.late_stops, 0)
  const events = await waitFor(async () => {
    const es = await h.platform.store.readStream(`task-${late}`)
    return es.some((e) => e.type === 'TaskBackOnTime') ? es : undefined
  }, 'TaskBackOnTime')
  const backEvent = events.find((e) => e.type === 'TaskBackOnTime')!
  t.match(backEvent.data, { ulid: late, late_by_minutes: null, late_since: null, delayed_at: (delayedEvent.data as any).delayed_at })
  t.equal(events.filter((e) => e.type === 'TaskBackOnTime').length, 1, 'once')

  // The OpenAPI document names the fields.
  const doc = (await h.call('GET', '/openapi.json')).json()
  for (const f of ['window', 'late', 'late_by_minutes', 'late_since']) t.ok(doc.components.schemas.Eta.properties[f], `Eta.${f}`)
  t.ok(doc.components.schemas.Route.properties.late_stops, 'Route.late_stops')
  t.ok(doc.components.schemas.RouteProgressSnapshot.properties.late_stops, 'RouteProgressSnapshot.late_stops')
})
