import type { ColumnType } from 'kysely'

/** bigint: `pg` returns it as a string, PGlite as a number; write numbers. */
type Int8 = ColumnType<number | string, number, number>
type Int8Null = ColumnType<number | string | null, number | null, number | null>
type Json<T> = ColumnType<T, string, string>

export type FeedTaskStatus = 'pending' | 'started' | 'arrived' | 'complete' | 'failed' | 'cancelled'
export type FeedRouteStatus = 'draft' | 'published' | 'started' | 'finished'

/** A route as its live feed and the feed's access checks need it (column meanings: docs/read-models.md). */
export interface RouteFeedRoutesTable {
  route_id: Int8
  organization_id: string
  driver_id: string | null
  status: FeedRouteStatus
  blocked_reason: string | null
  /** The route's tasks in order, each with its current status. */
  tasks: Json<{ ulid: string; status: FeedTaskStatus }[]>
  /** The newest `route_feed.seq` of this route (0 before any): a snapshot's resume point. */
  last_seq: Int8
}

/** Every task's status and the route it is on (a task event finds its route here). */
export interface RouteFeedTasksTable {
  ulid: string
  route_id: Int8Null
  status: FeedTaskStatus
}

/** Append-only: one row per change a route's watchers see; `seq` is the SSE id. */
export interface RouteFeedTable {
  seq: Int8
  route_id: Int8
  event: string
  data: Json<Record<string, unknown>>
  /** The log position of the event that made the row. */
  position: string
}

export interface RouteFeedTables {
  route_feed_routes: RouteFeedRoutesTable
  route_feed_tasks: RouteFeedTasksTable
  route_feed: RouteFeedTable
}
