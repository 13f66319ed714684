import type { ColumnType } from 'kysely'
import type { RouteStatus } from '../../schemas/api/routes.js'
import type { TaskStatus } from '../../schemas/api/tasks.js'
import type { TaskType } from '../../schemas/events/tasks.js'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
/** bigint: `pg` returns it as a string, PGlite as a number; write numbers. */
type Int8 = ColumnType<number | string, number, number>
type Int8Null = ColumnType<number | string | null, number | null, number | null>
type Json<T> = ColumnType<T, string, string>

/** One row per `route-<id>` stream (column meanings: docs/read-models.md). */
export interface RoutesTable {
  id: Int8
  organization_id: string
  name: string | null
  /** YYYY-MM-DD */
  shift_date: string
  status: RouteStatus
  status_before_block: RouteStatus | null
  driver_id: string | null
  vehicle_id: string | null
  capacity_grams: Int8Null
  capacity_volume_cm3: Int8Null
  capacity_packages: Int8Null
  start_address: Json<Record<string, unknown> | null>
  end_address: Json<Record<string, unknown> | null>
  blocked_reason: string | null
  /** Tasks on the route (kept with the membership rows, for listings). */
  task_count: number
  published_at: TsNull
  started_at: TsNull
  finished_at: TsNull
  created_at: Ts
  updated_at: Ts
  /** Events in the route's stream this row reflects (a command appends expecting it). */
  stream_version: number
}

/** A task's membership of a route: at most one row per task (a task is on one route at most). */
export interface RouteTasksTable {
  task_ulid: string
  route_id: Int8
  /** 1-based, contiguous per route. */
  position: number
  type: TaskType
  /** Follows the task's events from the status it had when added. */
  status: TaskStatus
  shipment_id: Int8Null
  load_grams: Int8
  load_volume_cm3: Int8
  load_packages: Int8
}

/** An organization's routes per (driver scope, status, shift date); `driver_id` '' counts all of them. No row at zero. */
export interface RouteListingCountsTable {
  org_id: string
  driver_id: string
  status: string
  /** 'YYYY-MM-DD' in; the driver's date type out (read it through to_char). */
  day: ColumnType<unknown, string, string>
  n: Int8
}

export interface RoutesTables {
  routes: RoutesTable
  route_tasks: RouteTasksTable
  route_listing_counts: RouteListingCountsTable
}
