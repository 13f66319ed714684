import { Type, type Static } from 'typebox'
import { AddressSnapshot } from './shipments.js'
import { Load, TaskType } from './tasks.js'
import { VehicleCapacity } from './vehicles.js'

// Event payloads of the route stream `route-<id>` (integer id from `route_id_seq`), version 1
// (DESIGN §1: upcast on read, never rewritten), and the two events a route writes into the task
// streams it touches. Every route payload names its route and organization, so a consumer (the live
// progress feed, organization webhooks, the process manager) needs nothing but the event.

const Ids = { route_id: Type.Integer(), organization_id: Type.String() }
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

/** What the route keeps of a task when it is added: enough for the capacity check without reading the task. */
export const RouteTaskSnapshot = Type.Object({
  ulid: Type.String(),
  type: TaskType,
  load: Load,
  shipment_id: Nullable(Type.Integer()),
  /** The task's status when it was added (its stream's version was the append's expected one), so
   * a read model following task events from there on starts right. Added by the routes module. */
  status: Type.Optional(Type.Union([
    Type.Literal('pending'), Type.Literal('started'), Type.Literal('arrived'), Type.Literal('complete'), Type.Literal('failed'), Type.Literal('cancelled'),
  ])),
})
export type RouteTaskSnapshot = Static<typeof RouteTaskSnapshot>

export const RouteCreated = Type.Object({
  ...Ids,
  name: Nullable(Type.String()),
  /** YYYY-MM-DD */
  shift_date: Type.String(),
  driver_id: Nullable(Type.String()),
  vehicle_id: Nullable(Type.String()),
  /** The vehicle's capacity when it was assigned (null dimensions unlimited; all null without a vehicle). */
  capacity: VehicleCapacity,
  start_address: Nullable(AddressSnapshot),
  end_address: Nullable(AddressSnapshot),
  created_at: Type.String(),
})
export type RouteCreated = Static<typeof RouteCreated>

/** Only the fields the update changed; `capacity` comes with a vehicle change. */
export const RouteUpdated = Type.Object({
  ...Ids,
  name: Type.Optional(Nullable(Type.String())),
  driver_id: Type.Optional(Nullable(Type.String())),
  vehicle_id: Type.Optional(Nullable(Type.String())),
  capacity: Type.Optional(VehicleCapacity),
  updated_at: Type.String(),
})
export type RouteUpdated = Static<typeof RouteUpdated>

/** Tasks inserted, in this order, before the task at 0-based `index` (at the end when index = length). */
export const RouteTasksAdded = Type.Object({
  ...Ids,
  tasks: Type.Array(RouteTaskSnapshot),
  index: Type.Integer(),
  added_at: Type.String(),
})
export type RouteTasksAdded = Static<typeof RouteTasksAdded>

export const RouteTaskRemoved = Type.Object({
  ...Ids,
  task_ulid: Type.String(),
  removed_at: Type.String(),
})
export type RouteTaskRemoved = Static<typeof RouteTaskRemoved>

/** The same set of tasks in a new order (the whole order). */
export const RouteTasksReordered = Type.Object({
  ...Ids,
  task_ulids: Type.Array(Type.String()),
  reordered_at: Type.String(),
})
export type RouteTasksReordered = Static<typeof RouteTasksReordered>

/** The card's event: from here on the driver sees the route. */
export const RoutePublished = Type.Object({ ...Ids, driver_id: Type.String(), published_at: Type.String() })
export type RoutePublished = Static<typeof RoutePublished>

/** Its first task started (`task_ulid`). */
export const RouteStarted = Type.Object({ ...Ids, task_ulid: Type.String(), started_at: Type.String() })
export type RouteStarted = Static<typeof RouteStarted>

/** Every task on it is final. */
export const RouteFinished = Type.Object({ ...Ids, finished_at: Type.String() })
export type RouteFinished = Static<typeof RouteFinished>

export const RouteBlocked = Type.Object({ ...Ids, reason: Type.String(), blocked_at: Type.String() })
export type RouteBlocked = Static<typeof RouteBlocked>

export const RouteUnblocked = Type.Object({ ...Ids, unblocked_at: Type.String() })
export type RouteUnblocked = Static<typeof RouteUnblocked>

// In the task stream `task-<ulid>`, appended in the same atomic write as the route's event: the task
// stream's expected version is what keeps a task on one route at most across API processes.

export const TaskRouted = Type.Object({ ulid: Type.String(), organization_id: Type.String(), route_id: Type.Integer(), routed_at: Type.String() })
export type TaskRouted = Static<typeof TaskRouted>

export const TaskUnrouted = Type.Object({ ulid: Type.String(), organization_id: Type.String(), route_id: Type.Integer(), unrouted_at: Type.String() })
export type TaskUnrouted = Static<typeof TaskUnrouted>

/** The events of a `route-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const RouteEvents = {
  RouteCreated, RouteUpdated, RouteTasksAdded, RouteTaskRemoved, RouteTasksReordered, RoutePublished, RouteStarted, RouteFinished,
  RouteBlocked, RouteUnblocked,
} as const

/** The markers a route writes into `task-<ulid>` streams, in the same atomic write as its own event: which route a task is on. */
export const TaskRouteMarkers = { TaskRouted, TaskUnrouted } as const
