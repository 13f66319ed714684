import { requireOwned } from '../shared/ownership.js'
import { idOf, stream } from '../../schemas/events/streams.js'
import { RouteEvents, type RouteTaskSnapshot, type TaskRouteMarkers } from '../../schemas/events/routes.js'
import { isEventOf, type EventOf } from '../../schemas/events/event-map.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import type { AddressSnapshot } from '../../schemas/events/shipments.js'
import { MAX_ROUTE_TASKS, type RouteStatus } from '../../schemas/api/routes.js'
import type { Decider } from '../shared/decider.js'
import type { TaskFacts } from '../tasks/queries.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'

/** The route aggregate (DESIGN §3.9): tasks in order, one vehicle, one driver, one date; stream `route-<id>`. */
export type RouteEvent = EventOf<typeof RouteEvents>

/** The markers a route writes into the task streams, in the same atomic write as its own event. */
export type TaskMarker = EventOf<typeof TaskRouteMarkers>

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

// The capacity rule (DESIGN §3.9), pure: what the add, reorder, update and the route's answer check.

/** One stop as the capacity rule sees it (a route's task snapshot has these). */
export interface LoadStop {
  type: string
  load: Load
  shipment_id: number | null
}
export interface Load { grams: number; volume_cm3: number; packages: number }

export const DIMENSIONS = ['grams', 'volume_cm3', 'packages'] as const
export type Dimension = typeof DIMENSIONS[number]

export interface Overflow { dimension: Dimension; capacity: number; peak: number }
export interface LoadProfile {
  /** The highest load along the sequence, per dimension (the start included). */
  peak: Load
  /** The first dimension (in DIMENSIONS order) whose peak exceeds the capacity, or null. */
  overflow: Overflow | null
}

const zero = (): Load => ({ grams: 0, volume_cm3: 0, packages: 0 })
/** Tasks that put goods on the vehicle where they stand (a return collects them back from the recipient). */
const LOADS_AT_STOP = new Set(['pickup', 'return'])

/**
 * The loading rule of DESIGN §3.9, per dimension: every delivery is on board at the start unless
 * its shipment is picked up earlier on this route; a pickup adds its load where it stands; a
 * delivery takes its load off. Inspections and services carry nothing. Pure and O(n).
 */
export function loadProfile(stops: readonly LoadStop[], capacity: VehicleCapacity): LoadProfile {
  const current = zero()
  // A delivery is loaded at the start unless a pickup of its shipment stands before it.
  const seenPickup = new Set<number>()
  for (const s of stops) {
    if (LOADS_AT_STOP.has(s.type) && s.shipment_id !== null) seenPickup.add(s.shipment_id)
    const atStart = s.type === 'delivery' && !(s.shipment_id !== null && seenPickup.has(s.shipment_id))
    if (atStart) for (const d of DIMENSIONS) current[d] += s.load[d]
  }
  const peak = { ...current }
  for (const s of stops) {
    if (LOADS_AT_STOP.has(s.type)) for (const d of DIMENSIONS) current[d] += s.load[d]
    else if (s.type === 'delivery') for (const d of DIMENSIONS) current[d] -= s.load[d]
    for (const d of DIMENSIONS) if (current[d] > peak[d]) peak[d] = current[d]
  }
  let overflow: Overflow | null = null
  for (const d of DIMENSIONS) {
    const cap = capacity[d]
    if (cap !== null && peak[d] > cap) { overflow = { dimension: d, capacity: cap, peak: peak[d] }; break }
  }
  return { peak, overflow }
}

/** The 422 message of an overflow, naming the dimension, the capacity and the peak. */
export const overflowMessage = (o: Overflow) =>
  `The route's load would exceed the vehicle's capacity in ${o.dimension}: capacity ${o.capacity}, peak ${o.peak}.`

// The decisions several route slices share (pure, like each slice's decide): a new route (create,
// plan), tasks added (add, create, plan), a new order of the tasks (reorder, optimize).

/** What a route's decision knows of a task it adds or names: the tasks module's facts (its queries.ts). */
export type { TaskFacts }

const FINAL = new Set(['complete', 'failed', 'cancelled'])

/** Tasks to insert: before `position` (1-based; null: at the end), with the facts the checks need. */
export interface TasksToAdd {
  organization_id: string
  task_ulids: readonly string[]
  /** 1-based; null: at the end. */
  position: number | null
  tasks: ReadonlyMap<string, TaskFacts>
  now: Date
}

/** A new route's fields, its id drawn from the sequence by the slice before deciding. */
export interface NewRoute {
  route_id: number
  organization_id: string
  shift_date: string
  name: string | null
  driver_id: string | null
  vehicle_id: string | null
  capacity: VehicleCapacity
  start_address: AddressSnapshot | null
  end_address: AddressSnapshot | null
  task_ulids: readonly string[]
  tasks: ReadonlyMap<string, TaskFacts>
  now: Date
}

/** A draft route (create, and each route of a plan); with `task_ulids`, its tasks in the same write (checked as an add is). */
export function newRoute(d: NewRoute, state: RouteState): RouteEvent[] {
  if (state.exists) throw new IllegalStateError('The route already exists.', 'route_exists')
  const created: RouteEvent = {
    type: 'RouteCreated',
    data: {
      route_id: d.route_id, organization_id: d.organization_id, name: d.name, shift_date: d.shift_date, driver_id: d.driver_id,
      vehicle_id: d.vehicle_id, capacity: d.capacity, start_address: d.start_address, end_address: d.end_address, created_at: d.now.toISOString(),
    },
  }
  if (!d.task_ulids.length) return [created]
  const after = evolve(state, created)
  return [created, ...tasksAdded(after, { route_id: d.route_id, organization_id: d.organization_id }, { ...d, position: null })]
}

/**
 * The tasks inserted before `position` (1-based, default the end), each checked (one 422 naming
 * every bad `task_ulids.N`): a task of the organization, named once, not final, on no route. Then
 * the capacity of the whole new sequence (DESIGN §3.9's loading rule).
 * Shared by the add, the creation and the plan.
 */
export function tasksAdded(state: RouteState, ids: { route_id: number; organization_id: string }, d: TasksToAdd): RouteEvent[] {
  const bag = new ErrorBag()
  const snapshots: RouteTaskSnapshot[] = []
  d.task_ulids.forEach((ulid, i) => {
    const field = `task_ulids.${i}`
    const f = d.tasks.get(ulid)
    if (d.task_ulids.indexOf(ulid) !== i) return bag.add(field, 'The task appears more than once.')
    if (!f || f.organizationId !== ids.organization_id) return bag.add(field, 'The selected task is not a task of your organization.')
    if (FINAL.has(f.status)) return bag.add(field, `The task is ${f.status}; a final task cannot be added to a route.`)
    if (f.routeId === ids.route_id || state.tasks.some((t) => t.ulid === ulid)) return bag.add(field, 'The task is already on this route.')
    if (f.routeId !== null) return bag.add(field, `The task is already on route ${f.routeId}; a task is on one route at most.`)
    snapshots.push({ ulid, type: f.type, load: f.load, shipment_id: f.shipmentId, status: f.status })
  })
  const length = state.tasks.length
  if (d.position !== null && d.position > length + 1) bag.add('position', `The position may not be greater than ${length + 1}.`)
  if (length + d.task_ulids.length > MAX_ROUTE_TASKS) bag.add('task_ulids', `A route holds at most ${MAX_ROUTE_TASKS} tasks.`)
  bag.throwIfAny()
  if (!snapshots.length) return []
  const index = d.position === null ? length : d.position - 1
  const next = [...state.tasks]
  next.splice(index, 0, ...snapshots)
  const { overflow } = loadProfile(next, state.capacity)
  if (overflow) bag.add('task_ulids', overflowMessage(overflow))
  bag.throwIfAny()
  return [{ type: 'RouteTasksAdded', data: { ...ids, tasks: snapshots, index, added_at: d.now.toISOString() } }]
}

/** The same set of tasks in a new order (422 naming each stranger or repeat, and the set when one is missing), within capacity. */
export function tasksReordered(state: RouteState, ids: { route_id: number; organization_id: string }, order: readonly string[], now: Date): RouteEvent[] {
  const bag = new ErrorBag()
  const on = new Map(state.tasks.map((t) => [t.ulid, t]))
  order.forEach((u, i) => {
    if (order.indexOf(u) !== i) bag.add(`task_ulids.${i}`, 'The task appears more than once.')
    else if (!on.has(u)) bag.add(`task_ulids.${i}`, 'The task is not on this route.')
  })
  const missing = state.tasks.filter((t) => !order.includes(t.ulid))
  if (missing.length) bag.add('task_ulids', `A reorder lists every task of the route once; missing: ${missing.map((t) => t.ulid).join(', ')}.`)
  bag.throwIfAny()
  if (order.every((u, i) => state.tasks[i]!.ulid === u)) return []
  const { overflow } = loadProfile(order.map((u) => on.get(u)!), state.capacity)
  if (overflow) bag.add('task_ulids', overflowMessage(overflow))
  bag.throwIfAny()
  return [{ type: 'RouteTasksReordered', data: { ...ids, task_ulids: [...order], reordered_at: now.toISOString() } }]
}

