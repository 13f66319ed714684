// The solver for real addresses, in the platform's terms: tasks at lat/lng with windows in epoch
// seconds, service seconds and loads (e.g. [grams, volume_cm3, packages]); travel by haversine at
// ROUTING_SPEED_KMH. Ready for POST /routes/plan and /routes/{id}/optimize to call.
import { haversineMatrix, type LatLng } from './matrix.js'
import type { Job, Problem, Shipment, UnassignedReason, Vehicle } from './model.js'
import { solve } from './solve.js'

export interface EpochWindow { from: number; to: number }

export interface PlanningTask extends LatLng {
  id: string
  /** A delivery's load leaves the depot with the vehicle; a pickup's rides to the route's end. */
  type?: 'delivery' | 'pickup'
  service_s?: number
  time_windows?: EpochWindow[]
  load?: number[]
}

/** A pickup and the delivery of what it collected: same vehicle, pickup first. */
export interface PlanningPair {
  pickup: PlanningTask
  delivery: PlanningTask
}

export interface PlanningVehicle {
  id: string
  start?: LatLng
  end?: LatLng
  /** Per load dimension; null or missing: unlimited. */
  capacity?: (number | null)[]
  shift?: EpochWindow
}

export interface PlanningInput {
  tasks: PlanningTask[]
  pairs?: PlanningPair[]
  vehicles: PlanningVehicle[]
  speedKmh?: number
  seconds?: number
  iterations?: number
  seed?: number
  /** Least driving time (default) or least distance, once the most tasks are placed. */
  objective?: 'duration' | 'distance'
}

export interface PlannedStop { task_id: string; arrival: number; service_start: number; departure: number; distance_m: number }

export interface PlannedRoute { vehicle_id: string; stops: PlannedStop[]; start: number; end: number; distance_m: number; duration_s: number }

export interface Plan {
  routes: PlannedRoute[]
  unassigned: { task_id: string; reason: UnassignedReason }[]
  distance_m: number
  duration_s: number
}

/** Plans `tasks` (and pickup–delivery `pairs`) over `vehicles`: most tasks served, then least driving time (or distance). */
export function planTasks(input: PlanningInput): Plan {
  const points: LatLng[] = []
  const at = (p: LatLng) => points.push({ lat: p.lat, lng: p.lng }) - 1
  const ids: string[] = []
  const idOf = (task: PlanningTask) => ids.push(task.id) - 1
  const span = (w: { from: number; to: number }): [number, number] => [w.from, w.to]
  const windows = (t: PlanningTask) => t.time_windows?.map(span)
  const jobs: Job[] = input.tasks.map((t) => ({
    id: idOf(t),
    location_index: at(t),
    service: t.service_s ?? 0,
    time_windows: windows(t),
    ...(t.type === 'pickup' ? { pickup: t.load ?? [] } : { delivery: t.load ?? [] }),
  }))
  const shipments: Shipment[] = (input.pairs ?? []).map((p) => ({
    amount: p.pickup.load ?? p.delivery.load ?? [],
    pickup: { id: idOf(p.pickup), location_index: at(p.pickup), service: p.pickup.service_s ?? 0, time_windows: windows(p.pickup) },
    delivery: { id: idOf(p.delivery), location_index: at(p.delivery), service: p.delivery.service_s ?? 0, time_windows: windows(p.delivery) },
  }))
  const vehicles: Vehicle[] = input.vehicles.map((v, i) => ({
    id: i,
    ...(v.start ? { start_index: at(v.start) } : {}),
    ...(v.end ? { end_index: at(v.end) } : {}),
    ...(v.capacity ? { capacity: v.capacity.map((c) => c ?? Infinity) } : {}),
    ...(v.shift ? { time_window: span(v.shift) } : {}),
  }))
  const started = performance.now()
  const problem: Problem = { jobs, shipments, vehicles, matrices: haversineMatrix(points, input.speedKmh ?? 30) }
  const seconds = input.seconds === undefined ? undefined : Math.max(0, input.seconds - (performance.now() - started) / 1000)
  const solution = solve(problem, { seconds, iterations: input.iterations, seed: input.seed, objective: input.objective })
  const routes = solution.routes.map((r): PlannedRoute => {
    const first = r.steps[0]!
    const last = r.steps[r.steps.length - 1]!
    return {
      vehicle_id: input.vehicles[r.vehicle]!.id,
      stops: r.steps.filter((s) => s.id !== undefined).map((s) => {
        const service = s.type === 'job' ? (jobs[s.id!]!.service ?? 0) : stepService(shipments, s.id!)
        return { task_id: ids[s.id!]!, arrival: s.arrival, service_start: s.service_start, departure: s.service_start + service, distance_m: s.distance }
      }),
      start: first.service_start,
      end: last.arrival,
      distance_m: r.distance,
      duration_s: r.duration,
    }
  })
  return {
    routes,
    unassigned: solution.unassigned.map((u) => ({ task_id: ids[u.id]!, reason: u.reason })),
    distance_m: solution.summary.distance,
    duration_s: solution.summary.duration,
  }
}

function stepService(shipments: Shipment[], id: number): number {
  for (const s of shipments) {
    if (s.pickup.id === id) return s.pickup.service ?? 0
    if (s.delivery.id === id) return s.delivery.service ?? 0
  }
  return 0
}
