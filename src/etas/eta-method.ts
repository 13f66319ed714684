import type { Point } from '../infrastructure/geo/precision.js'
import { haversineMeters } from '../planning/matrix.js'

/** A route's status as the ETA engine tracks it (a block does not stop the clock). */
export type RouteStatus = 'draft' | 'published' | 'started' | 'finished'

/**
 * The ETA method (DESIGN §3.10; docs/decisions.md "ETAs"), pure: a route's tasks in order and where
 * the driver is → when the driver will arrive at each open task. Times are epoch milliseconds.
 */

export type StopStatus = 'pending' | 'started' | 'arrived' | 'complete' | 'failed' | 'cancelled'
export type EtaBasis = 'position' | 'last_stop' | 'plan'

export interface TimeWindow { from: number; to: number }

export interface Stop {
  ulid: string
  status: StopStatus
  /** Null: nowhere to drive to (no coordinates, or a state's or country's centre). */
  point: Point | null
  /** Sorted, not overlapping. */
  windows: readonly TimeWindow[]
  serviceMs: number
  arrivedAt: number | null
  /** When it became complete or failed (cancelled tasks are not visited). */
  finalAt: number | null
}

export interface RouteForEta {
  stops: readonly Stop[]
  /** The route's start address, when it has one to drive from. */
  start: Point | null
  startedAt: number | null
  /** The driver's newest position. */
  position: { point: Point; recordedAt: number } | null
}

export interface Origin { point: Point | null; at: number; basis: EtaBasis }

export interface ComputedEta {
  ulid: string
  at: number
  from: number
  to: number
  basis: EtaBasis
  /** 1 for the next stop. */
  stopsAhead: number
  /** The window the arrival falls in or waits for; when the arrival is past every window, the last one. */
  window: TimeWindow | null
  /** How far `at` lies past that window's end (negative: inside or before it); null without windows. */
  lateMs: number | null
}

/** A position older than this no longer says where the driver is (DESIGN §3.10: 15 minutes). */
export const POSITION_STALE_MS = 15 * 60_000

const FINAL: ReadonlySet<StopStatus> = new Set(['complete', 'failed', 'cancelled'])
export const isOpen = (s: StopStatus) => !FINAL.has(s)

/** Great-circle distance in metres: the planner's own measure, so an ETA agrees with the plan it follows. */
export const haversineM = (a: Point, b: Point): number => haversineMeters(a, b)

export const travelMs = (meters: number, speedKmh: number) => (meters / (speedKmh / 3.6)) * 1000

/**
 * Where the walk starts: the driver's position while fresh; else the last stop done (its place,
 * when it was finished) or the stop the driver stands at; else the route's start address at the
 * route's start.
 */
export function originOf(route: RouteForEta, now: number): Origin {
  const p = route.position
  if (p && now - p.recordedAt <= POSITION_STALE_MS) return { point: p.point, at: p.recordedAt, basis: 'position' }
  let last: { point: Point; at: number } | null = null
  for (const s of route.stops) {
    if (!s.point) continue
    const at = s.status === 'arrived' ? s.arrivedAt : s.status === 'complete' || s.status === 'failed' ? s.finalAt : null
    if (at !== null && (last === null || at >= last.at)) last = { point: s.point, at }
  }
  if (last) return { ...last, basis: 'last_stop' }
  return { point: route.start, at: route.startedAt ?? now, basis: 'plan' }
}

/** The first window not over at `arrival` (waiting for it if it has not opened); null when all are over. */
export function windowFor(windows: readonly TimeWindow[], arrival: number): TimeWindow | null {
  for (const w of windows) if (w.to >= arrival) return w
  return null
}

/**
 * How wide the uncertainty is, before (`early`) and after (`late`) the ETA: a floor, a random-walk
 * term in the stops ahead (each leg and service adds its own error), a share of the time ahead, and
 * a factor for how little the walk knows of where the driver is. Calibrated on the driver
 * simulator's days (test/bench/eta-accuracy.bench.ts prints how many arrivals fell inside).
 */
export function spreadOf(stopsAhead: number, aheadMs: number, basis: EtaBasis): { early: number; late: number } {
  const factor = basis === 'position' ? 1 : basis === 'last_stop' ? 1.3 : 1.6
  const late = (2 * 60_000 + 2 * 60_000 * Math.sqrt(Math.max(0, stopsAhead - 1)) + 0.08 * Math.max(0, aheadMs)) * factor
  return { early: 0.6 * late, late }
}

/**
 * Walks the open tasks in route order from `origin`: travel over the great-circle distance at
 * `speedKmh`, never arriving before `now`; wait for the time window to open; stay the task's
 * duration. A task the driver stands at (`arrived`) holds it for its duration (or until now); a task
 * without coordinates costs its duration and gets no ETA. Final tasks are passed over.
 */
export function walk(route: RouteForEta, origin: Origin, now: number, speedKmh: number): ComputedEta[] {
  const out: ComputedEta[] = []
  let t = origin.at
  let here = origin.point
  let k = 0
  for (const s of route.stops) {
    if (!isOpen(s.status)) continue
    if (s.status === 'arrived') {
      here = s.point ?? here
      t = Math.max(t, (s.arrivedAt ?? t) + s.serviceMs, now)
      continue
    }
    if (!s.point) {
      t += s.serviceMs
      continue
    }
    // Whole milliseconds: what is stated is stored and read back, and must compare the same then.
    const arrival = Math.round(Math.max(t + (here ? travelMs(haversineM(here, s.point), speedKmh) : 0), now))
    const window = s.windows.length ? windowFor(s.windows, arrival) ?? s.windows[s.windows.length - 1]! : null
    const waits = window !== null && arrival < window.from
    const at = waits ? window.from : arrival
    k++
    const spread = spreadOf(k, at - now, origin.basis)
    out.push({
      ulid: s.ulid, at, basis: origin.basis, stopsAhead: k, window,
      from: Math.round(Math.max(now, waits ? at : at - spread.early)),
      to: Math.round(at + spread.late),
      lateMs: window === null ? null : at - window.to,
    })
    t = at + s.serviceMs
    here = s.point
  }
  return out
}

export const computeEtas = (route: RouteForEta, now: number, speedKmh: number): ComputedEta[] => walk(route, originOf(route, now), now, speedKmh)

/**
 * The driver's own speed over the great-circle distance, learned from the legs it drove (from a
 * stop finished to the next arrival): the configured speed counts as a prior leg of `PRIOR_M`, so a
 * few legs move it little and a day of legs dominates; kept within half and one and a half times
 * the configured speed.
 */
export const PRIOR_M = 3000
export function learnedSpeedKmh(configuredKmh: number, legs: { meters: number; ms: number }): number {
  const priorMs = travelMs(PRIOR_M, configuredKmh)
  const kmh = ((PRIOR_M + legs.meters) / (priorMs + legs.ms)) * 3600
  return Math.min(1.5 * configuredKmh, Math.max(0.5 * configuredKmh, kmh))
}

/**
 * A leg worth learning from: long enough to measure, not one where the driver waited for a window
 * to open (its time says nothing of the road), and not absurd (a stop marked from elsewhere).
 */
export function legCounts(meters: number, ms: number, arrivedAt: number, windows: readonly TimeWindow[], configuredKmh: number): boolean {
  if (meters < 200 || ms <= 0) return false
  const w = windowFor(windows, arrivedAt)
  if (w && arrivedAt < w.from + 60_000) return false
  const kmh = (meters / ms) * 3600
  return kmh >= 0.2 * configuredKmh && kmh <= 3 * configuredKmh
}
