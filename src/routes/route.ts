import { requireOwned } from '../shared/ownership.js'
import { idOf, stream } from '../../schemas/events/streams.js'
import { RouteEvents, type RouteTaskSnapshot, type TaskRouteMarkers } from '../../schemas/events/routes.js'
import { eventNames, isEventOf, type EventOf } from '../../schemas/events/event-map.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import type { RouteStatus } from '../../schemas/api/routes.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError } from '../shared/errors.js'

/** The route aggregate (DESIGN §3.9): tasks in order, one vehicle, one driver, one date; stream `route-<id>`. */
export type RouteEvent = EventOf<typeof RouteEvents>

/** The markers a route writes into the task streams, in the same atomic write as its own event. */
export type TaskMarker = EventOf<typeof TaskRouteMarkers>

export const routeEventTypes = eventNames(RouteEvents)

export interface RouteState {
  exists: boolean
  id: number | null
  organizationId: string | null
  status: RouteStatus
  /** The status a block interrupted (an unblock returns to it). */
  statusBeforeBlock: RouteStatus | null
  name: string | null
  shiftDate: string | null
  driverId: string | null
  vehicleId: string | null
  capacity: VehicleCapacity
  /** In route order. */
  tasks: RouteTaskSnapshot[]
}

export const routeStream = stream.route
export const routeIdOfStream = idOf.route

export const unlimited: VehicleCapacity = { grams: null, volume_cm3: null, packages: null }

export const initialState = (): RouteState => ({
  exists: false, id: null, organizationId: null, status: 'draft', statusBeforeBlock: null, name: null, shiftDate: null,
  driverId: null, vehicleId: null, capacity: unlimited, tasks: [],
})

export function evolve(state: RouteState, event: RouteEvent): RouteState {
  switch (event.type) {
    case 'RouteCreated': {
      const d = event.data
      return {
        ...initialState(), exists: true, id: d.route_id, organizationId: d.organization_id, name: d.name, shiftDate: d.shift_date,
        driverId: d.driver_id, vehicleId: d.vehicle_id, capacity: d.capacity,
      }
    }
    case 'RouteUpdated': {
      const d = event.data
      return {
        ...state,
        name: d.name !== undefined ? d.name : state.name,
        driverId: d.driver_id !== undefined ? d.driver_id : state.driverId,
        vehicleId: d.vehicle_id !== undefined ? d.vehicle_id : state.vehicleId,
        capacity: d.capacity ?? state.capacity,
      }
    }
    case 'RouteTasksAdded': {
      const tasks = [...state.tasks]
      tasks.splice(event.data.index, 0, ...event.data.tasks)
      return { ...state, tasks }
    }
    case 'RouteTaskRemoved': return { ...state, tasks: state.tasks.filter((t) => t.ulid !== event.data.task_ulid) }
    case 'RouteTasksReordered': {
      const byUlid = new Map(state.tasks.map((t) => [t.ulid, t]))
      return { ...state, tasks: event.data.task_ulids.map((u) => byUlid.get(u)).filter((t): t is RouteTaskSnapshot => t !== undefined) }
    }
    case 'RoutePublished': return { ...state, status: 'published', driverId: event.data.driver_id }
    case 'RouteStarted': return state.status === 'blocked' ? { ...state, statusBeforeBlock: 'started' } : { ...state, status: 'started' }
    case 'RouteFinished': return { ...state, status: 'finished', statusBeforeBlock: null }
    case 'RouteBlocked': return { ...state, status: 'blocked', statusBeforeBlock: state.status }
    case 'RouteUnblocked': return { ...state, status: state.statusBeforeBlock ?? 'draft', statusBeforeBlock: null }
    default: return state
  }
}

export const foldRoute = (events: readonly { type: string; data: unknown }[]): RouteState =>
  events.reduce((s, e) => (isEventOf(RouteEvents, e) ? evolve(s, e) : s), initialState())

/** A command on an existing route of the caller's organization (another tenant's route is unknown). */
export function requireRoute(state: RouteState, organizationId: string): { route_id: number; organization_id: string } {
  requireOwned(state, organizationId, 'Route')
  return { route_id: state.id!, organization_id: state.organizationId }
}

/** The task-stream markers that go with these route events (one per task added or removed). */
export function taskMarkersOf(events: readonly RouteEvent[]): { stream: string; marker: TaskMarker }[] {
  const out: { stream: string; marker: TaskMarker }[] = []
  for (const e of events) {
    if (e.type === 'RouteTasksAdded') {
      for (const t of e.data.tasks) {
        out.push({ stream: stream.task(t.ulid), marker: { type: 'TaskRouted', data: { ulid: t.ulid, organization_id: e.data.organization_id, route_id: e.data.route_id, routed_at: e.data.added_at } } })
      }
    } else if (e.type === 'RouteTaskRemoved') {
      const d = e.data
      out.push({ stream: stream.task(d.task_ulid), marker: { type: 'TaskUnrouted', data: { ulid: d.task_ulid, organization_id: d.organization_id, route_id: d.route_id, unrouted_at: d.removed_at } } })
    }
  }
  return out
}

export const routeDeciderOf = <C>(decide: (command: C, state: RouteState) => RouteEvent[]): Decider<RouteState, C, RouteEvent> =>
  ({ decide, evolve, initialState })

/** What the route's status would be without a block (a block pauses the route, not its life cycle). */
export const underlyingStatus = (s: RouteState): RouteStatus => (s.status === 'blocked' ? s.statusBeforeBlock ?? 'draft' : s.status)

/** Tasks and settings change while draft, published or started (DESIGN §3.9); not blocked, not finished. */
export function requireEditable(state: RouteState): void {
  if (state.status === 'finished') throw new IllegalStateError('The route is finished; it cannot change.', 'route_finished')
  if (state.status === 'blocked') throw new IllegalStateError('The route is blocked; unblock it first.', 'route_blocked')
}
