import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import { feedStatusOf } from '../../../projections/route-feed/route-feed-projection.js'
import type { FeedTaskStatus } from '../../../projections/route-feed/tables.js'
import { progressOf } from '../../../projections/routes/progress.js'
import type { RouteProgressSnapshot } from '../../../schemas/api/route-progress.js'

/** Who watches: the organization (its token or a dispatcher's), or one of its drivers. */
export interface FeedViewer { organizationId: string; driverId: string | null }

export interface FeedRoute {
  route_id: number
  organization_id: string
  driver_id: string | null
  status: string
  blocked_reason: string | null
  tasks: { ulid: string; status: FeedTaskStatus }[]
  last_seq: number
}

/** One row of the feed, as a server-sent event. */
export interface FeedFrame { id: number; event: string; data: string }

const parseJson = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T

export async function readFeedRoute(rm: Kysely<ReadModelDatabase>, routeId: number): Promise<FeedRoute | undefined> {
  const r = await rm.selectFrom('route_feed_routes').selectAll().where('route_id', '=', routeId).executeTakeFirst()
  if (!r) return undefined
  return { ...r, route_id: Number(r.route_id), last_seq: Number(r.last_seq), tasks: parseJson(r.tasks) }
}

/**
 * DESIGN §3.9: the organization sees its routes; a driver only the routes it drives once published.
 * Anything else does not exist for the viewer (404).
 */
export function visibleTo(route: FeedRoute, viewer: FeedViewer): boolean {
  if (route.organization_id !== viewer.organizationId) return false
  return viewer.driverId === null || (route.driver_id === viewer.driverId && route.status !== 'draft')
}

export function snapshotOf(route: FeedRoute): RouteProgressSnapshot {
  return {
    route_id: route.route_id,
    status: feedStatusOf(route),
    blocked_reason: route.blocked_reason,
    progress: progressOf(route.tasks.map((t) => t.status)),
    tasks: route.tasks.map((t, i) => ({ ulid: t.ulid, position: i + 1, status: t.status })),
    last_event_id: route.last_seq,
  }
}

/** The route's feed after `seq`, in order (bounded: a reader far behind reads on in the next call). */
export async function framesAfter(rm: Kysely<ReadModelDatabase>, routeId: number, seq: number, limit = 1000): Promise<FeedFrame[]> {
  const rows = await rm.selectFrom('route_feed').select(['seq', 'event', 'data'])
    .where('route_id', '=', routeId).where('seq', '>', seq).orderBy('seq').limit(limit).execute()
  return rows.map((r) => ({ id: Number(r.seq), event: r.event, data: typeof r.data === 'string' ? r.data : JSON.stringify(r.data) }))
}
