import { Type } from 'typebox'
import { ListingCursor, Nullable, PaginationLinks, PaginationMeta } from './common.js'
import { NotificationEvent } from '../events/notifications.js'

export const NotificationAttempt = Type.Object({
  attempt: Type.Integer(),
  attempted_at: Type.String({ format: 'date-time' }),
  status_code: Nullable(Type.Integer({ description: 'HTTP status; null when no response arrived' })),
  latency_ms: Type.Number(),
  error: Nullable(Type.String()),
}, { title: 'NotificationAttempt' })

export const Notification = Type.Object({
  notification_id: Type.String(),
  event: NotificationEvent,
  shipment_id: Type.Integer(),
  status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Array(NotificationAttempt),
  next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  delivered_at: Nullable(Type.String({ format: 'date-time' })),
  occurred_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
}, { title: 'Notification' })

export const NotificationsQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')])),
  shipment_id: Type.Optional(Type.Integer({ minimum: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'a page of `limit` rows; `cursor` (from `meta.next_cursor` or `links.next`) walks on' })),
  cursor: ListingCursor,
})

export const NotificationList = Type.Object({
  data: Type.Array(Notification),
  links: PaginationLinks,
  // The listing's pagination (issue 32) beside the carrier API's `next_cursor` (DESIGN §3.5).
  meta: Type.Object({ next_cursor: Nullable(Type.String()), ...PaginationMeta.properties }),
}, { title: 'NotificationList' })

export const NotificationIdParams = Type.Object({ notification_id: Type.String({ maxLength: 64 }) })
export const NotificationEnvelope = Type.Object({ notification: Notification }, { title: 'NotificationEnvelope' })
