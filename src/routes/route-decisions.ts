import { MAX_ROUTE_TASKS } from '../../schemas/api/routes.js'
import type { RouteTaskSnapshot } from '../../schemas/events/routes.js'
import type { AddressSnapshot } from '../../schemas/events/shipments.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { loadProfile, overflowMessage } from './capacity.js'
import { evolve, type RouteEvent, type RouteState } from './route.js'
import type { TaskFacts } from './route-command.js'

// The decisions several route slices share (pure, like each slice's decide): a new route (create,
// plan), tasks added (add, create, plan), a new order of the tasks (reorder, optimize).

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

