import type { ApiClient } from './api-client.js'
import type { PlannedRoute, Point } from './day.js'
import type { Rng } from './random.js'
import type { ServerClock } from './server-clock.js'

/** How a simulated driver behaves (DESIGN §3.10 issue 23: speeds and service times with noise, a few failed stops). */
export interface DriverBehaviour {
  speedKmh: number
  /** Log-normal spread of each driver's own pace (some drive faster than the plan says, some slower). */
  driverSpread: number
  /** Log-normal spread of each leg's speed around the driver's pace (traffic, parking). */
  legSpread: number
  /** Log-normal spread of each stop's stay around its duration. */
  serviceSpread: number
  /** Share of stops that fail (no answer): a short stay, then `fail`. */
  failRate: number
  /** Server time between two positions. */
  positionEveryMs: number
  /** Extra stay at some stops (by ulid): a stop made late on purpose. */
  extraMs?: ReadonlyMap<string, number>
  /**
   * The driver held up at this stop until the stops after it are late (`--late`): it stays until the
   * next stop can be reached no sooner than `lateMs` after its window closes (at least `lateMs` more).
   */
  holdUp?: { ulid: string; lateMs: number }
}

/** How much longer to stay so that `next` is reached `lateMs` after its window closes (at least `lateMs`). */
export function holdUpMs(doneAt: number, legMs: number, next: { windows: readonly { from: number; to: number }[] } | undefined, lateMs: number): number {
  const reach = doneAt + legMs
  const closes = next?.windows.find((w) => w.to >= reach)?.to ?? null
  return Math.max(lateMs, closes === null ? 0 : closes + lateMs - reach)
}

/** What happened at a stop, in server time. */
export interface StopOutcome { ulid: string; arrivedAt: number; doneAt: number; failed: boolean }

export type DriverEvent =
  | { kind: 'position'; route: number; at: number; tookMs: number }
  | { kind: 'arrived' | 'done' | 'failed'; route: number; stop: number; ulid: string; at: number }

const KM_PER_DEG = 111.195
const distanceKm = (a: Point, b: Point) => {
  const dLat = (b.lat - a.lat) * KM_PER_DEG
  const dLng = (b.lng - a.lng) * KM_PER_DEG * Math.cos(((a.lat + b.lat) / 2) * (Math.PI / 180))
  return Math.hypot(dLat, dLng)
}
/** Degrees clockwise from north, from `a` towards `b` (flat: a few kilometres). */
const bearing = (a: Point, b: Point) => {
  const deg = (Math.atan2((b.lng - a.lng) * Math.cos(((a.lat + b.lat) / 2) * (Math.PI / 180)), b.lat - a.lat) * 180) / Math.PI
  return Math.round(((deg % 360) + 360) % 360)
}
const between = (a: Point, b: Point, f: number): Point => ({ lat: a.lat + (b.lat - a.lat) * f, lng: a.lng + (b.lng - a.lng) * f })

/**
 * Drives one planned route through the public API with the driver's own token, on the server's
 * clock: a position every `positionEveryMs` (moving in a straight line at the leg's speed, still
 * while waiting or serving), `start` when setting off to a stop, `arrive` on getting there (when
 * early for its window, after waiting for it to open), then `complete` or `fail`.
 */
export async function driveRoute(
  driver: ApiClient, clock: ServerClock, route: PlannedRoute, depot: Point, startAt: number, b: DriverBehaviour, rng: Rng,
  onEvent: (e: DriverEvent) => void = () => undefined,
): Promise<StopOutcome[]> {
  const pace = rng.factor(b.driverSpread)
  let here = depot
  let t = startAt
  const outcomes: StopOutcome[] = []
  let heading: number | null = null
  const report = async (p: Point, at: number) => {
    await clock.until(at)
    const started = performance.now()
    try {
      const r = await driver.call('POST', '/drivers/me/positions', { positions: [{ lat: p.lat, lng: p.lng, recorded_at: new Date(clock.now()).toISOString(), heading }] })
      onEvent({ kind: 'position', route: route.id, at: Date.parse(r.received_at), tookMs: performance.now() - started })
    } catch { /* a lost position is a lost position: the next one follows */ }
  }
  /** Positions from `from` to `to` (server time), moving from `a` to `b`. */
  const move = async (a: Point, bPoint: Point, from: number, to: number) => {
    // A phone reports the way it faces: the leg's bearing while driving, the last one while standing.
    if (a.lat !== bPoint.lat || a.lng !== bPoint.lng) heading = bearing(a, bPoint)
    for (let at = from + b.positionEveryMs; at < to; at += b.positionEveryMs) await report(between(a, bPoint, (at - from) / Math.max(1, to - from)), at)
  }
  await report(depot, startAt)
  for (const [i, s] of route.stops.entries()) {
    await clock.until(t)
    await driver.call('POST', `/tasks/${s.ulid}/start`)
    const legMs = (distanceKm(here, s.point) / (b.speedKmh * pace * rng.factor(b.legSpread))) * 3600_000
    const reached = t + legMs
    await move(here, s.point, t, reached)
    const window = s.windows.find((w) => w.to >= reached) ?? null
    // Early: wait by the door for the window to open, then ring.
    const arrivedAt = window && reached < window.from ? window.from : reached
    await move(s.point, s.point, reached, arrivedAt)
    await clock.until(arrivedAt)
    await driver.call('POST', `/tasks/${s.ulid}/arrive`)
    onEvent({ kind: 'arrived', route: route.id, stop: i + 1, ulid: s.ulid, at: arrivedAt })
    const failed = rng.next() < b.failRate
    let stay = s.serviceMs * rng.factor(b.serviceSpread) * (failed ? 0.3 : 1) + (b.extraMs?.get(s.ulid) ?? 0)
    if (b.holdUp?.ulid === s.ulid) {
      const next = route.stops[i + 1]
      const legMs = next ? (distanceKm(s.point, next.point) / (b.speedKmh * pace)) * 3600_000 : 0
      stay += holdUpMs(arrivedAt + stay, legMs, next, b.holdUp.lateMs)
    }
    const doneAt = arrivedAt + stay
    await move(s.point, s.point, arrivedAt, doneAt)
    await clock.until(doneAt)
    if (failed) await driver.call('POST', `/tasks/${s.ulid}/fail`, { reason: 'no_answer' })
    else await driver.call('POST', `/tasks/${s.ulid}/complete`, {})
    onEvent({ kind: failed ? 'failed' : 'done', route: route.id, stop: i + 1, ulid: s.ulid, at: doneAt })
    outcomes.push({ ulid: s.ulid, arrivedAt, doneAt, failed })
    here = s.point
    t = doneAt
  }
  return outcomes
}
