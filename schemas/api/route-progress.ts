import { Type, type Static } from 'typebox'
import { NullableEta } from './etas.js'

// Live route progress (DESIGN §3.9): the snapshot, the live links. The stream's frames are
// server-sent events, described in docs/decisions.md ("Live route progress").

export const RouteProgressParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })

export const RouteProgressCounts = Type.Object({
  total: Type.Integer(), pending: Type.Integer(), started: Type.Integer(), complete: Type.Integer(),
  failed: Type.Integer(), cancelled: Type.Integer(), percent: Type.Integer({ description: 'final tasks, 0–100, rounded down' }),
}, { title: 'RouteProgressCounts' })

export const RouteProgressSnapshot = Type.Object({
  route_id: Type.Integer(),
  status: Type.String({ description: 'draft, published, started, finished; blocked while blocked' }),
  blocked_reason: Type.Union([Type.String(), Type.Null()]),
  progress: RouteProgressCounts,
  tasks: Type.Array(Type.Object({ ulid: Type.String(), position: Type.Integer({ description: '1-based' }), status: Type.String(), eta: NullableEta })),
  late_stops: Type.Integer({ minimum: 0, description: 'tasks whose ETA is late against their time window (`eta.late`)' }),
  last_event_id: Type.Integer({ description: 'send it as Last-Event-ID to the stream to continue from this snapshot' }),
}, { title: 'RouteProgressSnapshot' })
export type RouteProgressSnapshot = Static<typeof RouteProgressSnapshot>

export const LiveLinkBody = Type.Object({
  ttl_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'default 1440 (a day), at most 10080 (a week)' })),
}, { title: 'CreateLiveLinkRequest', additionalProperties: false })

export const LiveLink = Type.Object({ url: Type.String(), expires_at: Type.String() }, { title: 'LiveLink' })

export const LiveTokenParams = Type.Object({ token: Type.String({ maxLength: 512 }) })
