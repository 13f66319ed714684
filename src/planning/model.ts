// The solver's input and output, in VROOM's shape (https://github.com/VROOM-Project/vroom/blob/master/docs/API.md)
// reduced to what the platform uses. Locations are indices into the travel matrices.

/** A time window `[start, end]` in the matrix's time unit (seconds for real addresses). */
export type TimeWindow = [number, number]

export interface Job {
  id: number
  location_index: number
  service?: number
  /** Deliveries are loaded at the route's start; several dimensions (e.g. grams, cm³, parcels). */
  delivery?: number[]
  /** Pickups ride to the route's end. */
  pickup?: number[]
  /** Service must start inside one of them; none = any time. */
  time_windows?: TimeWindow[]
}

export interface ShipmentStep {
  id: number
  location_index: number
  service?: number
  time_windows?: TimeWindow[]
}

/** A pickup-and-delivery pair: `amount` rides from pickup to delivery on one vehicle. */
export interface Shipment {
  amount?: number[]
  pickup: ShipmentStep
  delivery: ShipmentStep
}

export interface Vehicle {
  id: number
  /** No start: the route begins at its first step (no travel counted before it). */
  start_index?: number
  /** No end: the route ends at its last step. */
  end_index?: number
  capacity?: number[]
  /** The shift: leave the start no earlier than its start, reach the end by its end. */
  time_window?: TimeWindow
}

export interface Matrices {
  /** Travel time between location indices (the cost minimised). */
  durations: ArrayLike<number>[]
  /** Travel distance; defaults to the durations. */
  distances?: ArrayLike<number>[]
}

export interface Problem {
  jobs?: Job[]
  shipments?: Shipment[]
  vehicles: Vehicle[]
  matrices: Matrices
}

export interface SolveOptions {
  /** Wall-clock budget in seconds (default 1). */
  seconds?: number
  /** Iteration budget; with it, and no `seconds`, the result depends only on input and seed. */
  iterations?: number
  seed?: number
  /** What to minimise once the most jobs are served: travel time (default) or distance. */
  objective?: 'duration' | 'distance'
}

export type StepType = 'start' | 'job' | 'pickup' | 'delivery' | 'end'

export interface Step {
  type: StepType
  /** The job's or shipment step's id (absent on start and end). */
  id?: number
  location_index?: number
  /** When the vehicle gets there. */
  arrival: number
  /** When service starts (arrival plus waiting). */
  service_start: number
  waiting_time: number
  /** Load on board when leaving this step. */
  load: number[]
  /** Distance travelled since the route's start. */
  distance: number
}

export interface Route {
  vehicle: number
  steps: Step[]
  /** Travel cost of the route: its travel time, or its distance with `objective: 'distance'`. */
  cost: number
  distance: number
  /** Travel + service + waiting, from leaving the start to reaching the end. */
  duration: number
  service: number
  waiting_time: number
}

/**
 * Why a job is left out: `capacity` (heavier than every vehicle), `time_window` (no vehicle can
 * reach it inside its windows), `shift` (its windows or the trip there and back fall outside every
 * vehicle's shift), `fleet` (it fits a vehicle alone, but not together with the rest of the plan).
 */
export type UnassignedReason = 'capacity' | 'time_window' | 'shift' | 'fleet'

export interface Unassigned {
  id: number
  type: 'job' | 'pickup' | 'delivery'
  reason: UnassignedReason
}

export interface Solution {
  summary: {
    cost: number
    routes: number
    unassigned: number
    distance: number
    duration: number
    service: number
    waiting_time: number
    /** Search iterations made, for the curious and for the determinism test. */
    iterations: number
  }
  routes: Route[]
  unassigned: Unassigned[]
}
