import type { Platform } from '../../platform.js'
import { readRoute } from '../queries.js'
import type { Route } from '../../../schemas/api/routes.js'
import { POSITIONS_CHANNEL, type PositionNotice } from '../../positions/positions-table.js'
import { organizationSettings } from '../../organizations/settings.js'
import { isoOrNull } from '../../shared/rows.js'

/**
 * What the dispatcher's live page shows (DESIGN §3.10), for the route its link opens and nothing
 * else: the route's name, driver, vehicle, each stop in order with its recipient, address line,
 * windows, status and ETA, the driver's position and the progress. Read from the route object.
 */
export interface LivePageData {
  route: { name: string | null; status: string; shift_date: string; blocked_reason: string | null }
  driver: { name: string } | null
  vehicle: { name: string; plate: string } | null
  progress: Route['progress']
  driver_position: Route['driver_position']
  stops: LivePageStop[]
  /** The tile template (MAP_TILE_URL) the map draws under the stops; null: SVG alone. */
  tile_url: string | null
  /** The IANA time zone every time on the page is shown in: the organization's (issue 37). */
  time_zone: string
  /** Stops whose ETA is late against their window. */
  late_stops: number
  /** The server's clock when read and how fast it runs (CLOCK_RATE): ages on the page count from it, not the browser's. */
  clock: { now: string; rate: number }
}

export interface LivePageStop {
  ulid: string
  position: number
  type: string
  status: string
  recipient: string | null
  address_line: string | null
  /** Null when unknown or only a state's or country's centre (not a place to draw as a stop). */
  lat: number | null
  lng: number | null
  time_windows: { from: string; to: string }[]
  eta: Route['tasks'][number]['eta']
  /** When the driver arrived, while at the stop (`arrived`). */
  arrived_at: string | null
}

type Address = NonNullable<Route['tasks'][number]['address']>

/** `Av. Corrientes 1234, 5 B, C1043 Buenos Aires`: what a driver needs to find the door. */
export function addressLine(a: Address): string {
  const street = [a.street, a.street_number].filter((x) => x && x.trim()).join(' ')
  const unit = [a.floor, a.apartment].filter((x): x is string => !!x && x.trim() !== '').join(' ')
  const place = [a.zipcode, a.city?.name].filter((x): x is string => !!x && x.trim() !== '').join(' ')
  return [street, unit, place].filter(Boolean).join(', ')
}

export async function livePageData(platform: Platform, organizationId: string, routeId: number): Promise<LivePageData | undefined> {
  const r = await readRoute(platform, { organizationId, driverId: null }, routeId)
  if (!r) return undefined
  const atStop = r.tasks.filter((t) => t.status === 'arrived').map((t) => t.ulid)
  const [settings, arrivals] = await Promise.all([
    organizationSettings(platform.rm, organizationId),
    atStop.length ? platform.rm.selectFrom('tasks').select(['ulid', 'arrived_at']).where('ulid', 'in', atStop).where('organization_id', '=', organizationId).execute() : [],
  ])
  const arrivedAt = new Map(arrivals.map((a) => [a.ulid, isoOrNull(a.arrived_at)]))
  return {
    route: { name: r.name, status: r.status, shift_date: r.shift_date, blocked_reason: r.blocked_reason },
    driver: r.driver ? { name: r.driver.name } : null,
    vehicle: r.vehicle ? { name: r.vehicle.name, plate: r.vehicle.plate } : null,
    progress: r.progress,
    driver_position: r.driver_position,
    stops: r.tasks.map((t) => {
      const a = t.address
      const drawable = a && a.geo_latitude !== null && a.geo_longitude !== null && a.geo_precision !== 'state' && a.geo_precision !== 'country'
      return {
        ulid: t.ulid, position: t.position, type: t.type, status: t.status,
        recipient: a?.name || null, address_line: a ? addressLine(a) || null : null,
        lat: drawable ? a.geo_latitude : null, lng: drawable ? a.geo_longitude : null,
        time_windows: t.time_windows, eta: t.eta, arrived_at: arrivedAt.get(t.ulid) ?? null,
      }
    }),
    tile_url: platform.config.mapTileUrl ?? null,
    time_zone: settings.time_zone,
    late_stops: r.late_stops,
    clock: { now: platform.clock().toISOString(), rate: platform.config.clockRate },
  }
}

type PositionListener = (n: PositionNotice) => void

/** The notices come from positions-table (this code base's own); the driver id is what routes one to its pages. */
const isPositionNotice = (v: unknown): v is PositionNotice =>
  typeof v === 'object' && v !== null && 'driver_id' in v && typeof v.driver_id === 'string'
const fanouts = new WeakMap<Platform, Promise<Set<PositionListener>>>()

/**
 * Drivers' new positions as they are stored by any API process (the NOTIFY each stored batch sends,
 * src/positions): one LISTEN per process, handed to every live page's stream here. Returns the
 * function that stops this listener.
 */
export async function onDriverPositions(platform: Platform, listener: PositionListener): Promise<() => void> {
  let set = fanouts.get(platform)
  if (!set) {
    set = (async () => {
      const listeners = new Set<PositionListener>()
      await platform.database.listen(POSITIONS_CHANNEL, (payload) => {
        let n: unknown
        try { n = JSON.parse(payload) } catch { return }
        if (!isPositionNotice(n)) return
        for (const l of listeners) l(n)
      })
      return listeners
    })()
    fanouts.set(platform, set)
  }
  const listeners = await set
  listeners.add(listener)
  return () => { listeners.delete(listener) }
}
