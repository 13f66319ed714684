import type { Point } from './day.js'

/**
 * What the simulator reads of a task on a route (`GET /routes/{id}`, `tasks[]`): its own shape of
 * the public API, not the server's types (the simulator is a client like any other).
 */
export interface RouteTaskView {
  ulid: string
  position: number
  status: string
  address: {
    street?: string | null
    street_number?: string | null
    city?: { name: string } | null
    geo_latitude: number | null
    geo_longitude: number | null
    geo_precision?: string | null
  } | null
  time_windows: { from: string; to: string }[]
}

/** A stop to drive to (with a warning when its point is only approximate), or one left alone and why. */
export type StopDecision =
  | { drive: true; point: Point; warning?: string }
  | { drive: false; final: boolean; reason: string }

const FINAL = new Set(['complete', 'failed', 'cancelled'])

/** `stop 3 (01J…, Calle 12, Rosario)`: how the log names a stop, so that the operator can find it. */
export function stopName(t: RouteTaskView): string {
  const a = t.address
  const street = [a?.street, a?.street_number].filter(Boolean).join(' ')
  const where = [street, a?.city?.name].filter(Boolean).join(', ')
  return `stop ${t.position} (${t.ulid}${where ? `, ${where}` : ''})`
}

/**
 * Whether the simulator drives to a route's task, and where (DESIGN §3.10 geo_precision): exact
 * coordinates as they are; a city-level address to the city's point, with a warning (the driver
 * would have to look for the house); a state- or country-level one, or none, is not a place to drive
 * to (the planner leaves those out too); a task already under way or final is not driven again.
 */
export function decideStop(t: RouteTaskView): StopDecision {
  if (FINAL.has(t.status)) return { drive: false, final: true, reason: `already ${t.status}` }
  if (t.status !== 'pending') return { drive: false, final: false, reason: `already ${t.status}: only pending stops are driven` }
  const a = t.address
  if (a?.geo_latitude == null || a.geo_longitude == null) return { drive: false, final: false, reason: 'its address has no coordinates' }
  const point = { lat: a.geo_latitude, lng: a.geo_longitude }
  const at = `${point.lat.toFixed(5)},${point.lng.toFixed(5)}`
  switch (a.geo_precision) {
    case 'exact': return { drive: true, point }
    case 'city': return { drive: true, point, warning: `a city-level address (geo_precision city): driven to ${a.city?.name ?? 'the city'}'s point ${at}` }
    case 'state':
    case 'country': return { drive: false, final: false, reason: `its address is only placed at its ${a.geo_precision}'s centre (geo_precision ${a.geo_precision}): nowhere to drive to` }
    default: return { drive: true, point, warning: `its address's precision is not known (geo_precision ${a.geo_precision ?? 'null'}): driven to ${at}` }
  }
}
