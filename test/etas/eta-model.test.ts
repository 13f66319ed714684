import t from 'tap'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { EtaModel } from '../../src/etas/eta-model.js'
import { haversineM, travelMs } from '../../src/etas/eta-method.js'

// The engine's rules without storage: given events and positions, when applied, then the ETA read
// model's changes (stated ETAs, history, frames, TaskDelayed requests) are exactly these.

const T0 = Date.parse('2026-11-27T09:00:00Z')
const MIN = 60_000
const origin = { lat: -32.95, lng: -60.65 }
const north = (km: number) => ({ lat: origin.lat + km / 111.195, lng: origin.lng })
const settings = { speedKmh: 30, delayThresholdMs: 10 * MIN }
const leg = (a: number, b: number) => Math.round(travelMs(haversineM(north(a), north(b)), 30))

let position = 0
const ev = (streamId: string, type: string, data: Record<string, unknown>, at: number): RecordedEvent => ({
  id: `e${++position}`, streamId, streamVersion: 1, position: String(position), type, data,
  metadata: { actor: { kind: 'system', id: 't' }, occurred_at: new Date(at).toISOString() }, schemaVersion: 1, recordedAt: new Date(at),
})
const iso = (ms: number) => new Date(ms).toISOString()
const address = (km: number, precision = 'exact') => ({ geo_latitude: north(km).lat, geo_longitude: north(km).lng, geo_precision: precision })

const created = (ulid: string, km: number, over: Record<string, unknown> = {}) =>
  ev(`task-${ulid}`, 'TaskCreated', { ulid, organization_id: 'org_a', address: address(km), time_windows: [], duration_minutes: 5, ...over }, T0 - 60 * MIN)
const route = (id: number, ulids: string[]) => [
  ev(`route-${id}`, 'RouteCreated', { route_id: id, organization_id: 'org_a', driver_id: 'usr_d', start_address: address(0), created_at: iso(T0) }, T0 - 30 * MIN),
  ev(`route-${id}`, 'RouteTasksAdded', { route_id: id, organization_id: 'org_a', index: 0, tasks: ulids.map((ulid) => ({ ulid, status: 'pending' })), added_at: iso(T0) }, T0 - 30 * MIN),
  ev(`route-${id}`, 'RoutePublished', { route_id: id, organization_id: 'org_a', driver_id: 'usr_d', published_at: iso(T0) }, T0 - 20 * MIN),
]
const started = (id: number, at = T0) => ev(`route-${id}`, 'RouteStarted', { route_id: id, organization_id: 'org_a', started_at: iso(at) }, at)
const step = (ulid: string, type: string, field: string, at: number, extra: Record<string, unknown> = {}) =>
  ev(`task-${ulid}`, type, { ulid, organization_id: 'org_a', [field]: iso(at), ...extra }, at)

t.test('given a published route, when it starts, then every open task is stated once with history and a frame', async (t) => {
  const m = new EtaModel(settings)
  m.applyEvents([created('A', 2), created('B', 4), ...route(1, ['A', 'B'])])
  t.same(m.drain().feed, [], 'nothing is stated before the route starts')
  m.applyEvents([started(1)])
  const out = m.drain()
  t.same(out.history.map((h) => [h.task_ulid, h.seq, h.eta_at, h.basis, h.stops_ahead]), [
    ['A', 1, T0 + leg(0, 2), 'plan', 1],
    ['B', 1, T0 + leg(0, 2) + 5 * MIN + leg(2, 4), 'plan', 2],
  ])
  t.same(out.feed.map((f) => [f.seq, f.task_ulid, (f.data as any).position]), [[1, 'A', 1], [2, 'B', 2]])
  t.match(out.feed[0]!.data, { route_id: 1, status: 'pending', eta: { basis: 'plan', at: iso(T0 + leg(0, 2)) }, progress: { total: 2, pending: 2 } })
})

t.test('a position restates only what moved by a minute or more', async (t) => {
  const m = new EtaModel(settings)
  m.applyEvents([created('A', 2), created('B', 4), ...route(1, ['A', 'B']), started(1)])
  m.drain()
  // The first position changes the basis: restated, though the times hardly move.
  m.applyPositions('usr_d', { point: north(0.5), recordedAt: T0 + MIN }, T0 + MIN)
  t.same(m.drain().history.map((h) => [h.task_ulid, h.seq, h.basis]), [['A', 2, 'position'], ['B', 2, 'position']])
  // Where the plan expects the van two minutes in (1 km at 30 km/h): nothing moves by a minute.
  m.applyPositions('usr_d', { point: north(1), recordedAt: T0 + 2 * MIN }, T0 + 2 * MIN)
  const same = m.drain()
  t.same(same.history, [], 'moved less than a minute: not restated')
  t.equal(same.routes.length, 1, 'the position itself is kept')
  // Still there ten minutes in: everything is eight minutes later.
  m.applyPositions('usr_d', { point: north(1), recordedAt: T0 + 10 * MIN }, T0 + 10 * MIN)
  const later = m.drain()
  t.same(later.history.map((h) => [h.task_ulid, h.seq, h.basis]), [['A', 3, 'position'], ['B', 3, 'position']])
  t.equal(later.history[0]!.eta_at, T0 + 10 * MIN + leg(1, 2))
  t.same(later.feed.map((f) => f.seq), [5, 6], 'the route\'s frames go on numbering')
})

t.test('a position of another driver, or of a driver without a route out, changes nothing', async (t) => {
  const m = new EtaModel(settings)
  m.applyEvents([created('A', 2), ...route(1, ['A']), started(1)])
  m.drain()
  m.applyPositions('usr_other', { point: north(1), recordedAt: T0 + 10 * MIN }, T0 + 10 * MIN)
  const out = m.drain()
  t.same([out.routes, out.history, out.feed], [[], [], []])
})

t.test('transitions: an arrival fixes the history, a stop done moves the rest, the leg teaches the speed', async (t) => {
  const m = new EtaModel(settings)
  m.applyEvents([created('A', 2), created('B', 4), created('C', 6), ...route(1, ['A', 'B', 'C']), started(1)])
  m.drain()
  // The driver took twice the planned time to A.
  const arrivedA = T0 + 2 * leg(0, 2)
  m.applyEvents([step('A', 'TaskStarted', 'started_at', T0), step('A', 'TaskArrived', 'arrived_at', arrivedA)])
  const arrived = m.drain()
  t.same(arrived.fixes, [{ ulid: 'A', arrivedAt: arrivedA, outcome: null }], 'A\'s predictions get their actual arrival')
  t.notOk(arrived.tasks.find((x) => x.ulid === 'A')!.eta, 'a task under way at its stop has no ETA')
  const doneA = arrivedA + 5 * MIN
  m.applyEvents([step('A', 'TaskCompleted', 'completed_at', doneA)])
  m.drain()
  const arrivedB = doneA + 2 * leg(2, 4)
  m.applyEvents([step('B', 'TaskArrived', 'arrived_at', arrivedB)])
  const r = m.routes.get(1)!
  t.ok(r.legMs > 0 && r.legMeters > 0, 'A → B counted as a leg (the start → A leg had no stop done before it)')
  m.applyEvents([step('B', 'TaskCompleted', 'completed_at', arrivedB + 5 * MIN)])
  const out = m.drain()
  const c = out.tasks.find((x) => x.ulid === 'C')!.eta!
  t.equal(c.basis, 'last_stop', 'no position: from the last stop done')
  t.ok(c.at - (arrivedB + 5 * MIN) > leg(4, 6) * 1.2, 'slower than planned: the learned speed stretches the next leg')
  t.same(out.fixes.find((f) => f.ulid === 'B'), { ulid: 'B', arrivedAt: arrivedB, outcome: 'complete' })
})

t.test('route changes: a task taken off loses its ETA, a reorder restates, a finish clears', async (t) => {
  const m = new EtaModel(settings)
  m.applyEvents([created('A', 2), created('B', 4), ...route(1, ['A', 'B']), started(1)])
  m.drain()
  m.applyEvents([ev('route-1', 'RouteTasksReordered', { route_id: 1, organization_id: 'org_a', task_ulids: ['B', 'A'], reordered_at: iso(T0 + MIN) }, T0 + MIN)])
  const reordered = m.drain()
  t.same(reordered.feed.map((f) => [f.task_ulid, (f.data as any).position]), [['B', 1], ['A', 2]])
  m.applyEvents([
    ev('route-1', 'RouteTaskRemoved', { route_id: 1, organization_id: 'org_a', task_ulid: 'A', removed_at: iso(T0 + 2 * MIN) }, T0 + 2 * MIN),
    ev('task-A', 'TaskUnrouted', { ulid: 'A', organization_id: 'org_a', route_id: 1, unrouted_at: iso(T0 + 2 * MIN) }, T0 + 2 * MIN),
  ])
  t.equal(m.tasks.get('A')!.eta, null)
  t.equal(m.tasks.get('A')!.routeId, null)
  m.applyEvents([ev('route-1', 'RouteFinished', { route_id: 1, organization_id: 'org_a', finished_at: iso(T0 + 3 * MIN) }, T0 + 3 * MIN)])
  t.equal(m.tasks.get('B')!.eta, null, 'a finished route states nothing')
})

t.test('TaskDelayed: asked once late by the threshold, again only after an ETA back inside', async (t) => {
  const m = new EtaModel(settings)
  const window = { from: iso(T0), to: iso(T0 + 10 * MIN) }
  m.applyEvents([created('A', 2, { time_windows: [window] }), ...route(1, ['A']), started(1)])
  t.same(m.drain().delays, [], 'inside the window: nothing')
  // Stuck at the start: 25 minutes in, the ETA is 25 + 4 minutes, 19 past the window.
  m.applyPositions('usr_d', { point: north(0), recordedAt: T0 + 25 * MIN }, T0 + 25 * MIN)
  const late = m.drain().delays
  t.same(late.map((d) => [d.ulid, d.minutesLate, d.backInsideAt, d.windowTo]), [['A', Math.round((25 * MIN + leg(0, 2) - 10 * MIN) / MIN), null, T0 + 10 * MIN]])
  m.applyPositions('usr_d', { point: north(0), recordedAt: T0 + 26 * MIN }, T0 + 26 * MIN)
  t.equal(m.drain().delays.length, 1, 'asked again while the log has no TaskDelayed (the engine asks once; the stream decides)')
  m.applyEvents([ev('task-A', 'TaskDelayed', { ulid: 'A', organization_id: 'org_a', delayed_at: iso(T0 + 26 * MIN) }, T0 + 26 * MIN)])
  m.applyPositions('usr_d', { point: north(0), recordedAt: T0 + 27 * MIN }, T0 + 27 * MIN)
  t.same(m.drain().delays, [], 'recorded: not asked again while it stays late')
  // The window moves? No: the driver is suddenly there (a fresh position next to A) but the clock is past the window still.
  const w2 = { from: iso(T0), to: iso(T0 + 60 * MIN) }
  m.applyEvents([ev('task-A', 'TaskCreated', { ulid: 'A', organization_id: 'org_a', address: address(2), time_windows: [w2], duration_minutes: 5 }, T0 + 28 * MIN)])
  t.equal(m.tasks.get('A')!.backInsideAt, T0 + 28 * MIN, 'an ETA back inside the window re-arms it')
  m.applyPositions('usr_d', { point: north(0), recordedAt: T0 + 70 * MIN }, T0 + 70 * MIN)
  const again = m.drain().delays
  t.same(again.map((d) => [d.ulid, d.backInsideAt]), [['A', T0 + 28 * MIN]], 'late again after coming back: asked again, naming the episode')
})

t.test('a task at a state\'s centre gets no ETA but keeps its place in the walk', async (t) => {
  const m = new EtaModel(settings)
  m.applyEvents([created('A', 2, { address: address(2, 'state') }), created('B', 4), ...route(1, ['A', 'B']), started(1)])
  const out = m.drain()
  t.equal(m.tasks.get('A')!.eta, null)
  t.equal(out.history.map((h) => h.task_ulid).join(), 'B')
  t.equal(m.tasks.get('B')!.eta!.at, T0 + 5 * MIN + leg(0, 4), 'A\'s five minutes, then straight to B')
})
