import type { ApiClient } from './api-client.js'
import type { Rng } from './random.js'
import type { ServerClock } from './server-clock.js'

/** A planned day for the driver simulator, made through the public API as a dispatcher would. */

export interface Point { lat: number; lng: number }
export interface PlannedStop { ulid: string; point: Point; windows: { from: number; to: number }[]; serviceMs: number }
export interface PlannedRoute { id: number; driverId: string; driverName: string; driverToken: string; stops: PlannedStop[] }

export interface DayOptions {
  routes: number
  stops: number
  /** Where the depot is; stops are drawn uniformly within `radiusKm` of it. */
  center: Point
  radiusKm: number
  /** How long after planning the day starts (server time, ms): the windows and the routes' start. */
  startInMs: number
  windowHours: number
  durationMinutes: number
  rng: Rng
  /** Names what this run creates (e-mails, plates) so that runs do not collide. */
  tag: string
  log?: (line: string) => void
}

const KM_PER_DEG = 111.195

/** A point uniformly inside the disc of `radiusKm` around `c`. */
export function pointNear(c: Point, radiusKm: number, rng: Rng): Point {
  const r = radiusKm * Math.sqrt(rng.next())
  const a = 2 * Math.PI * rng.next()
  return { lat: c.lat + (r * Math.sin(a)) / KM_PER_DEG, lng: c.lng + (r * Math.cos(a)) / (KM_PER_DEG * Math.cos((c.lat * Math.PI) / 180)) }
}

/** Runs `fn` over `items` with at most `n` at a time. */
export async function inParallel<T, R>(items: readonly T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!, i)
    }
  }))
  return out
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Drivers, vans and the day's deliveries (exact coordinates, a window each), planned over the vans
 * with `POST /routes/plan` (50 vans and 1,000 tasks a request at most: bigger days are planned in
 * parts) and published.
 */
export async function planDay(api: ApiClient, clock: ServerClock, o: DayOptions): Promise<{ routes: PlannedRoute[]; unassigned: { task_ulid: string; reason: string }[]; startAt: number }> {
  const log = o.log ?? (() => undefined)
  const drivers = await inParallel(Array.from({ length: o.routes }, (_, i) => i), 8, async (i) => {
    const name = `Sim Driver ${i + 1}`
    const r = await api.call<{ user: { id: string; created_at: string }; access_token: string }>('POST', '/users', { name, email: `sim-${o.tag}-${i + 1}@sim.example`, role: 'driver' })
    // The server stamps it with its clock (which may run fast, CLOCK_RATE): the simulator keeps to it.
    if (i === 0) clock.calibrate(r.user.created_at)
    return { id: r.user.id, token: r.access_token, name }
  })
  const startAt = clock.now() + o.startInMs
  const vans = await inParallel(Array.from({ length: o.routes }, (_, i) => i), 8, async (i) => {
    const r = await api.call<{ vehicle: { id: string } }>('POST', '/vehicles', { name: `Sim van ${i + 1}`, plate: `SIM ${o.tag.slice(0, 4)} ${i + 1}`.toUpperCase(), capacity: { packages: o.stops } })
    return r.vehicle.id
  })
  log(`${drivers.length} drivers and vans`)
  // Windows scattered over the day (a route's worth of stops at some 9 minutes each), each
  // `windowHours` wide and none closing before the day starts: the plan orders the stops by them.
  const dayMs = o.stops * (o.durationMinutes + 4) * 60_000
  const windowMs = o.windowHours * 3600_000
  const specs = Array.from({ length: o.routes * o.stops }, () => {
    const from = Math.round(startAt - windowMs / 4 + o.rng.next() * dayMs)
    return { point: pointNear(o.center, o.radiusKm, o.rng), windows: [{ from, to: from + windowMs }] }
  })
  const tasks = await inParallel(specs, 8, async (s, i) => {
    const r = await api.call<{ task: { ulid: string } }>('POST', '/tasks', {
      type: 'delivery', duration_minutes: o.durationMinutes, load: { grams: 1000, volume_cm3: 1000, packages: 1 },
      address: { name: `Customer ${i + 1}`, street: 'Calle', street_number: String(100 + i), city: 'Rosario', state: 'Santa Fe', country: 'AR', geo_latitude: s.point.lat, geo_longitude: s.point.lng },
      time_windows: s.windows.map((w) => ({ from: iso(w.from), to: iso(w.to) })),
    })
    return { ulid: r.task.ulid, point: s.point, windows: s.windows, serviceMs: o.durationMinutes * 60_000 }
  })
  log(`${tasks.length} tasks`)
  const byUlid = new Map(tasks.map((t) => [t.ulid, t]))
  const routes: PlannedRoute[] = []
  const unassigned: { task_ulid: string; reason: string }[] = []
  const shiftDate = iso(startAt).slice(0, 10)
  // Planned in parts of at most 50 vans and 1,000 tasks, each with its share of the tasks.
  const parts = Math.max(Math.ceil(o.routes / 50), Math.ceil(tasks.length / 1000))
  for (let p = 0; p < parts; p++) {
    const vanIdx = Array.from({ length: o.routes }, (_, i) => i).filter((i) => i % parts === p)
    const mine = tasks.filter((_, i) => Math.floor(i / o.stops) % parts === p)
    const plan = await api.call('POST', '/routes/plan', {
      shift_date: shiftDate, task_ulids: mine.map((t) => t.ulid), vehicle_ids: vanIdx.map((i) => vans[i]), driver_ids: vanIdx.map((i) => drivers[i]!.id),
    })
    unassigned.push(...plan.unassigned)
    for (const r of plan.routes) {
      const driver = drivers.find((d) => d.id === r.driver.id)!
      await api.call('POST', `/routes/${r.id}/publish`)
      routes.push({ id: r.id, driverId: driver.id, driverName: driver.name, driverToken: driver.token, stops: r.tasks.map((t: { ulid: string }) => byUlid.get(t.ulid)!) })
    }
  }
  const sizes = routes.map((r) => r.stops.length)
  log(`planned ${routes.length} routes (${sizes.length <= 20 ? sizes.join(', ') : `${Math.min(...sizes)}–${Math.max(...sizes)}`} stops), ${unassigned.length} unassigned`)
  return { routes, unassigned, startAt }
}
