import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../../projections/read-model-database.js'
import { feedStatusOf } from '../../../projections/route-feed/route-feed-projection.js'
import type { FeedTaskStatus } from '../../../projections/route-feed/tables.js'
import { progressOf } from '../../../projections/routes/progress.js'
import type { RouteProgressSnapshot } from '../../../schemas/api/route-progress.js'
import type { EtaView } from '../../etas/eta-views.js'
import { lateStops } from '../../etas/late-stops.js'
import { json } from '../../shared/rows.js'

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

/**
 * One row of a route's feeds, as a server-sent event: of the route feed (`id` its `route_feed.seq`)
 * or a `task.eta` frame of the ETA engine (`kind: 'eta'`, `id` its `route_eta_feed.seq`).
 * `streamId` is what the stream sends as `id:`: where its watcher stands in both after this frame.
 */
export interface FeedFrame { id: number; event: string; data: string; kind?: 'feed' | 'eta'; streamId?: string }

/** Where a stream stands in a route's two feeds. */
export interface FeedCursor { feed: number; eta: number }

/**
 * The SSE id of a place in both feeds: the route feed's number alone until the route has had a
 * `task.eta` frame (so streams of routes without ETAs keep their ids), then `<feed>-<eta>`.
 */
export const streamIdOf = (c: FeedCursor): string => (c.eta > 0 ? `${c.feed}-${c.eta}` : String(c.feed))

/** A `Last-Event-ID` back into a place in both feeds, or null when it is not one this server sends. */
export function parseStreamId(text: string): FeedCursor | null {
  const m = /^(\d{1,15})(?:-(\d{1,15}))?$/.exec(text.trim())
  return m ? { feed: Number(m[1]), eta: m[2] === undefined ? 0 : Number(m[2]) } : null
}


export async function readFeedRoute(rm: Kysely<ReadModelDatabase>, routeId: number): Promise<FeedRoute | undefined> {
  const r = await rm.selectFrom('route_feed_routes').selectAll().where('route_id', '=', routeId).executeTakeFirst()
  if (!r) return undefined
  return { ...r, route_id: Number(r.route_id), last_seq: Number(r.last_seq), tasks: json(r.tasks) }
}

/**
 * DESIGN §3.9: the organization sees its routes; a driver only the routes it drives once published.
 * Anything else does not exist for the viewer (404).
 */
export function visibleTo(route: FeedRoute, viewer: FeedViewer): boolean {
  if (route.organization_id !== viewer.organizationId) return false
  return viewer.driverId === null || (route.driver_id === viewer.driverId && route.status !== 'draft')
}

export function snapshotOf(route: FeedRoute, etas: ReadonlyMap<string, EtaView> = new Map()): RouteProgressSnapshot {
  const tasks = route.tasks.map((t, i) => ({ ulid: t.ulid, position: i + 1, status: t.status, eta: t.status === 'pending' || t.status === 'started' ? etas.get(t.ulid) ?? null : null }))
  return {
    route_id: route.route_id,
    status: feedStatusOf(route),
    blocked_reason: route.blocked_reason,
    progress: progressOf(route.tasks.map((t) => t.status)),
    tasks,
    late_stops: lateStops(tasks),
    last_event_id: route.last_seq,
  }
}

/** The route's `task.eta` frames after `seq`, in order (the ETA engine's, src/etas). */
export async function etaFramesAfter(rm: Kysely<ReadModelDatabase>, routeId: number, seq: number, limit = 1000): Promise<FeedFrame[]> {
  const rows = await rm.selectFrom('route_eta_feed').select(['seq', 'data'])
    .where('route_id', '=', routeId).where('seq', '>', seq).orderBy('seq').limit(limit).execute()
  return rows.map((r) => ({ id: Number(r.seq), kind: 'eta' as const, event: 'task.eta', data: typeof r.data === 'string' ? r.data : JSON.stringify(r.data) }))
}

/** The newest `task.eta` frame of the route (0 before any): where a snapshot's watcher starts. */
export async function lastEtaFrame(rm: Kysely<ReadModelDatabase>, routeId: number): Promise<number> {
  const r = await rm.selectFrom('eta_routes').select('eta_seq').where('route_id', '=', routeId).executeTakeFirst()
  return r ? Number(r.eta_seq) : 0
}

/** The route's feed after `seq`, in order (bounded: a reader far behind reads on in the next call). */
export async function framesAfter(rm: Kysely<ReadModelDatabase>, routeId: number, seq: number, limit = 1000): Promise<FeedFrame[]> {
  const rows = await rm.selectFrom('route_feed').select(['seq', 'event', 'data'])
    .where('route_id', '=', routeId).where('seq', '>', seq).orderBy('seq').limit(limit).execute()
  return rows.map((r) => ({ id: Number(r.seq), event: r.event, data: typeof r.data === 'string' ? r.data : JSON.stringify(r.data) }))
}
