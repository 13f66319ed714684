import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, PaginationLinks, PaginationMeta, pageQuery } from './common.js'
import { Address, AddressInput } from './shipments.js'
import { Capacity } from './vehicles.js'
import { TaskStatus } from './tasks.js'
import { TaskType } from '../events/tasks.js'
import { DriverPositionSummary, NullableEta } from './etas.js'

// Routes API: routes (DESIGN §3.9; spec "Route" states, GET/POST /routes, /routes/{id}/publish).

/** A route holds at most this many tasks (a day's work for one vehicle, with room to spare). */
export const MAX_ROUTE_TASKS = 1000
/** Tasks one request may add or name. */
export const MAX_TASKS_PER_REQUEST = 200

export const RouteStatus = Type.Union([
  Type.Literal('draft'), Type.Literal('published'), Type.Literal('blocked'), Type.Literal('started'), Type.Literal('finished'),
], { title: 'RouteStatus' })
export type RouteStatus = Static<typeof RouteStatus>

const Ulid = Type.String({ pattern: '^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$', description: 'a task ulid' })
const Ulids = Type.Array(Ulid, { minItems: 1, maxItems: MAX_TASKS_PER_REQUEST })
const ShiftDate = Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD' })
const Name = Type.String({ minLength: 1, maxLength: 100 })
const ForeignId = Type.String({ minLength: 1, maxLength: 64 })
const Time = Nullable(Type.String({ format: 'date-time' }))
const LoadShape = Type.Object({ grams: Type.Integer(), volume_cm3: Type.Integer(), packages: Type.Integer() }, { title: 'Load' })

export const CreateRouteBody = Type.Object({
  shift_date: ShiftDate,
  name: Type.Optional(Nullable(Name)),
  driver_id: Type.Optional(Nullable(ForeignId)),
  vehicle_id: Type.Optional(Nullable(ForeignId)),
  start_address: Type.Optional(Nullable(AddressInput)),
  end_address: Type.Optional(Nullable(AddressInput)),
  task_ulids: Type.Optional(Type.Array(Ulid, { maxItems: MAX_TASKS_PER_REQUEST })),
}, { title: 'CreateRouteRequest', additionalProperties: false })
export type CreateRouteBody = Static<typeof CreateRouteBody>

export const UpdateRouteBody = Type.Object({
  name: Type.Optional(Nullable(Name)),
  driver_id: Type.Optional(Nullable(ForeignId)),
  vehicle_id: Type.Optional(Nullable(ForeignId)),
}, { title: 'UpdateRouteRequest', additionalProperties: false, minProperties: 1 })
export type UpdateRouteBody = Static<typeof UpdateRouteBody>

export const AddRouteTasksBody = Type.Object({
  task_ulids: Ulids,
  position: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_ROUTE_TASKS + 1, description: '1-based; default: at the end' })),
}, { title: 'AddRouteTasksRequest', additionalProperties: false })

export const ReorderRouteTasksBody = Type.Object({
  task_ulids: Type.Array(Ulid, { maxItems: MAX_ROUTE_TASKS }),
}, { title: 'ReorderRouteTasksRequest', additionalProperties: false })

export const BlockRouteBody = Type.Object({ reason: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: 'not blank' }) }, { title: 'BlockRouteRequest', additionalProperties: false })

export const RouteParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) })
export const RouteTaskParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), ulid: Type.String({ maxLength: 64 }) })

export const RoutesQuery = Type.Object({
  shift_date: Type.Optional(ShiftDate),
  status: Type.Optional(RouteStatus),
  driver_id: Type.Optional(Type.String({ maxLength: 64 })),
  cursor: ListingCursor,
  ...pageQuery(),
}, { additionalProperties: false })

export const GetRouteQuery = Type.Object({
  as_of: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'the route as it was at this instant, from the event log' })),
}, { additionalProperties: false })

export const RouteTask = Type.Object({
  ulid: Type.String(),
  position: Type.Integer({ description: '1-based' }),
  type: TaskType,
  status: TaskStatus,
  address: Nullable(Address),
  time_windows: Type.Array(Type.Object({ from: Type.String(), to: Type.String() })),
  eta: NullableEta,
}, { title: 'RouteTask' })

export const RouteProgress = Type.Object({
  total: Type.Integer(), pending: Type.Integer(), started: Type.Integer(), complete: Type.Integer(),
  failed: Type.Integer(), cancelled: Type.Integer(), percent: Type.Integer(),
}, { title: 'RouteProgress' })

export const Route = Type.Object({
  id: Type.Integer(),
  name: Nullable(Type.String()),
  shift_date: Type.String(),
  status: RouteStatus,
  driver: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
  vehicle: Nullable(Type.Object({ id: Type.String(), name: Type.String(), plate: Type.String() })),
  tasks: Type.Array(RouteTask),
  late_stops: Type.Integer({ minimum: 0, description: 'tasks whose ETA is late against their time window (`eta.late`)' }),
  load: Type.Object({ ...LoadShape.properties }, { description: 'the peak along the sequence, per dimension' }),
  capacity: Capacity,
  progress: RouteProgress,
  blocked_reason: Nullable(Type.String()),
  published_at: Time,
  started_at: Time,
  finished_at: Time,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  driver_position: DriverPositionSummary,
}, { title: 'Route' })
export type Route = Static<typeof Route>

export const RouteEnvelope = Type.Object({ success: Type.Boolean(), route: Route }, { title: 'RouteEnvelope' })
export const RoutesPage = Type.Object({ routes: Type.Object({ data: Type.Array(Route), links: PaginationLinks, meta: PaginationMeta }) }, { title: 'RoutesPage' })
