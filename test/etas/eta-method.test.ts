import t from 'tap'
import {
  computeEtas, haversineM, learnedSpeedKmh, legCounts, originOf, POSITION_STALE_MS, travelMs, type RouteForEta, type Stop,
} from '../../src/etas/eta-method.js'

// DESIGN §3.10's method as a pure function: given a route and where the driver is, when the ETAs are
// computed at `now`, then each open task gets the arrival the walk predicts.

const T0 = Date.parse('2026-11-27T09:00:00Z')
const MIN = 60_000
const SPEED = 30
const depot = { lat: -34.6, lng: -58.4 }
/** A point `km` kilometres north of the depot. */
const north = (km: number) => ({ lat: depot.lat + km / 111.195, lng: depot.lng })
const legMs = (a: { lat: number; lng: number }, b: { lat: number; lng: number }) => Math.round(travelMs(haversineM(a, b), SPEED))

const stop = (ulid: string, km: number | null, over: Partial<Stop> = {}): Stop =>
  ({ ulid, status: 'pending', point: km === null ? null : north(km), windows: [], serviceMs: 5 * MIN, arrivedAt: null, finalAt: null, ...over })

const route = (stops: Stop[], over: Partial<RouteForEta> = {}): RouteForEta =>
  ({ stops, start: depot, startedAt: T0, position: null, ...over })

t.test('given a fresh position, when computed, then the next stop is the travel from it and the next adds the stay', async (t) => {
  const r = route([stop('A', 2), stop('B', 4)], { position: { point: north(1), recordedAt: T0 + 10 * MIN } })
  const now = T0 + 11 * MIN
  const [a, b] = computeEtas(r, now, SPEED)
  t.equal(a!.basis, 'position')
  t.equal(a!.at, Math.max(now, T0 + 10 * MIN + legMs(north(1), north(2))), 'from where the driver was seen, never before now')
  t.equal(b!.at, a!.at + 5 * MIN + legMs(north(2), north(4)), 'the stay at A, then the drive to B')
  t.equal(a!.stopsAhead, 1)
  t.equal(b!.stopsAhead, 2)
  t.ok(b!.to - b!.at > a!.to - a!.at, 'the window widens with the stops ahead')
  t.ok(a!.from <= a!.at && a!.at <= a!.to)
})

t.test('given a window not yet open, then the ETA waits for it and cannot be earlier', async (t) => {
  const opens = T0 + 60 * MIN
  const r = route([stop('A', 1, { windows: [{ from: opens, to: opens + 60 * MIN }] }), stop('B', 2)], { position: { point: depot, recordedAt: T0 } })
  const [a, b] = computeEtas(r, T0, SPEED)
  t.equal(a!.at, opens)
  t.equal(a!.from, opens, 'nobody is served before the window opens')
  t.equal(a!.lateMs, -60 * MIN)
  t.equal(b!.at, opens + 5 * MIN + legMs(north(1), north(2)))
})

t.test('given an arrival past every window, then lateMs is how far past the last one it lands', async (t) => {
  const r = route([stop('A', 10, { windows: [{ from: T0 - 60 * MIN, to: T0 - 30 * MIN }, { from: T0, to: T0 + 5 * MIN }] })], { position: { point: depot, recordedAt: T0 } })
  const [a] = computeEtas(r, T0, SPEED)
  t.equal(a!.at, T0 + legMs(depot, north(10)))
  t.same(a!.window, { from: T0, to: T0 + 5 * MIN })
  t.equal(a!.lateMs, a!.at - (T0 + 5 * MIN))
})

t.test('given no fresh position, then the walk starts at the last stop done, when it was done', async (t) => {
  const done = T0 + 30 * MIN
  const r = route([stop('A', 3, { status: 'complete', finalAt: done, arrivedAt: done - 5 * MIN }), stop('B', 5)], {
    position: { point: north(4), recordedAt: done - POSITION_STALE_MS - 1 },
  })
  t.same(originOf(r, done), { point: north(3), at: done, basis: 'last_stop' })
  const [b] = computeEtas(r, done, SPEED)
  t.equal(b!.basis, 'last_stop')
  t.equal(b!.at, done + legMs(north(3), north(5)))
  t.equal(computeEtas(r, done, SPEED).length, 1, 'a final task gets none')
})

t.test('given nothing done and no position, then the walk starts at the route\'s start address at its start', async (t) => {
  const r = route([stop('A', 3)])
  const [a] = computeEtas(r, T0, SPEED)
  t.equal(a!.basis, 'plan')
  t.equal(a!.at, T0 + legMs(depot, north(3)))
  const late = computeEtas(r, T0 + 3 * 60 * MIN, SPEED)[0]!
  t.equal(late.at, T0 + 3 * 60 * MIN, 'an arrival already due is now, not in the past')
  t.equal(computeEtas(route([stop('A', 3)], { start: null }), T0, SPEED)[0]!.at, T0, 'no start address: no travel to count')
})

t.test('given the driver at a stop, then it stays its duration (or until now) before the next', async (t) => {
  const arrived = T0 + 20 * MIN
  const r = route([stop('A', 1, { status: 'arrived', arrivedAt: arrived, serviceMs: 10 * MIN }), stop('B', 2)], { position: { point: north(1), recordedAt: arrived } })
  const now = arrived + 2 * MIN
  const [b] = computeEtas(r, now, SPEED)
  t.equal(b!.ulid, 'B', 'the task under way has no ETA of its own')
  t.equal(b!.at, arrived + 10 * MIN + legMs(north(1), north(2)))
  const overran = computeEtas(r, arrived + 25 * MIN, SPEED)[0]!
  t.equal(overran.at, arrived + 25 * MIN + legMs(north(1), north(2)), 'still there after its duration: it leaves now at the earliest')
})

t.test('given a stop without coordinates, then it has no ETA but its duration delays the rest', async (t) => {
  const r = route([stop('A', null, { serviceMs: 20 * MIN }), stop('B', 2)], { position: { point: depot, recordedAt: T0 } })
  const etas = computeEtas(r, T0, SPEED)
  t.same(etas.map((e) => e.ulid), ['B'])
  t.equal(etas[0]!.at, T0 + 20 * MIN + legMs(depot, north(2)))
  t.equal(etas[0]!.stopsAhead, 1)
})

t.test('the basis widens the uncertainty: the less the walk knows, the wider', async (t) => {
  const stops = [stop('A', 3)]
  const byPosition = computeEtas(route(stops, { position: { point: depot, recordedAt: T0 } }), T0, SPEED)[0]!
  const byPlan = computeEtas(route(stops), T0, SPEED)[0]!
  t.equal(byPosition.at, byPlan.at)
  t.ok(byPlan.to - byPlan.at > byPosition.to - byPosition.at)
})

t.test('learned speed: the configured one as a prior, moved by the legs driven, bounded', async (t) => {
  t.equal(learnedSpeedKmh(30, { meters: 0, ms: 0 }), 30)
  const slow = learnedSpeedKmh(30, { meters: 20_000, ms: travelMs(20_000, 20) })
  t.ok(slow > 20 && slow < 22, `mostly the legs' 20 km/h (${slow})`)
  t.equal(learnedSpeedKmh(30, { meters: 100_000, ms: travelMs(100_000, 5) }), 15, 'never below half the configured speed')
  t.equal(learnedSpeedKmh(30, { meters: 100_000, ms: travelMs(100_000, 200) }), 45, 'never above one and a half times')
  t.ok(legCounts(2000, travelMs(2000, 25), T0, [], 30))
  t.notOk(legCounts(100, 20_000, T0, [], 30), 'too short to measure')
  t.notOk(legCounts(2000, travelMs(2000, 25), T0 + 30_000, [{ from: T0, to: T0 + 60 * MIN }], 30), 'arrived as the window opened: it may have waited')
  t.notOk(legCounts(2000, 1000, T0, [], 30), 'absurdly fast')
})
