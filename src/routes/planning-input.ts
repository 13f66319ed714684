import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import type { Platform } from '../platform.js'
import { drivablePoint } from '../infrastructure/geo/precision.js'
import type { PlanningPair, PlanningTask } from '../planning/plan-tasks.js'
import { json } from '../shared/rows.js'

// What the solver is given, from the tasks' rows: shared by planning a day (plan-routes) and
// optimizing one route (optimize-route).

/** Tasks that put goods on board where they stand (the capacity rule's LOADS_AT_STOP). */
const LOADS_AT_STOP = new Set(['pickup', 'return'])

/** What the planner needs of a task's read-model row. */
export interface PlanningRow {
  ulid: string
  type: string
  address: unknown
  time_windows: unknown
  duration_minutes: number | null
  shipment_id: number | string | null
  load_grams: number | string
  load_volume_cm3: number | string
  load_packages: number | string
}

/**
 * The task's point (its address after geocoding), or undefined when it has none to drive to: no
 * coordinates, or only a state's or country's centre (DESIGN §3.10 geo_precision).
 */
export function pointOf(address: unknown): { lat: number; lng: number } | undefined {
  const p = drivablePoint(json<Record<string, unknown> | null>(address))
  return p && Number.isFinite(p.lat) && Number.isFinite(p.lng) ? p : undefined
}

/** The solver's day for a shift date: any local day of that date, whatever the organization's zone (UTC−12 … UTC+14). */
export function shiftWindow(shiftDate: string): { from: number; to: number } {
  const midnight = Date.parse(`${shiftDate}T00:00:00Z`) / 1000
  return { from: midnight - 14 * 3600, to: midnight + 86_400 + 12 * 3600 }
}

export const capacityVector = (c: VehicleCapacity) => [c.grams, c.volume_cm3, c.packages]

/**
 * The planner's tasks from rows (each with a point): windows in epoch seconds, service from the
 * duration, loads [grams, volume, packages] (inspections and services carry nothing), and a pickup
 * paired with a delivery of the same shipment (pickup first, same vehicle; first with first).
 */
export function planningTasksOf(rows: readonly PlanningRow[]): { tasks: PlanningTask[]; pairs: PlanningPair[] } {
  const toTask = (r: PlanningRow): PlanningTask => {
    const carries = LOADS_AT_STOP.has(r.type) || r.type === 'delivery'
    return {
      id: r.ulid, ...pointOf(r.address)!,
      type: LOADS_AT_STOP.has(r.type) ? 'pickup' : 'delivery',
      service_s: (r.duration_minutes ?? 0) * 60,
      time_windows: json<{ from: string; to: string }[] | null>(r.time_windows)?.map((w) => ({ from: Date.parse(w.from) / 1000, to: Date.parse(w.to) / 1000 })),
      load: carries ? [Number(r.load_grams), Number(r.load_volume_cm3), Number(r.load_packages)] : [0, 0, 0],
    }
  }
  const pickups = new Map<string, PlanningRow[]>()
  for (const r of rows) if (r.type === 'pickup' && r.shipment_id != null) pickups.set(String(r.shipment_id), [...(pickups.get(String(r.shipment_id)) ?? []), r])
  const paired = new Set<string>()
  const pairs: PlanningPair[] = []
  for (const r of rows) {
    if (r.type !== 'delivery' || r.shipment_id == null) continue
    const pickup = pickups.get(String(r.shipment_id))?.shift()
    if (!pickup) continue
    pairs.push({ pickup: toTask(pickup), delivery: toTask(r) })
    paired.add(pickup.ulid).add(r.ulid)
  }
  return { tasks: rows.filter((r) => !paired.has(r.ulid)).map(toTask), pairs }
}

/** The solver's time limit for a request of `n` tasks (docs/decisions.md): 2 s up to 100, growing to 5 s at 1,000. */
export function solverBudget(n: number): { seconds: number; iterations?: number } {
  if (n <= 100) return { seconds: 2, iterations: 20_000 }
  return { seconds: Math.min(5, 2 + (3 * (n - 100)) / 900) }
}

export const planningRows = (platform: Platform, orgId: string, ulids: readonly string[]) =>
  ulids.length
    ? platform.rm.selectFrom('tasks')
      .select(['ulid', 'type', 'status', 'route_id', 'address', 'time_windows', 'duration_minutes', 'shipment_id', 'load_grams', 'load_volume_cm3', 'load_packages'])
      .where('organization_id', '=', orgId).where('ulid', 'in', [...ulids]).execute()
    : Promise.resolve([])
