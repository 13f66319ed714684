import { sql } from 'kysely'
import type { Static } from 'typebox'
import { Notification, NotificationEnvelope, NotificationIdParams, NotificationList, NotificationsQuery } from '../../schemas/api/notifications.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import { listOutbox } from './outbox-listing.js'
import type { Platform } from '../platform.js'
import { carrierIdOf } from '../http/plugins/auth.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { requeue } from './outbox.js'
import { kickDispatchers } from './dispatcher.js'
import { attemptsByDelivery } from './attempts.js'
import { isoOrNull } from '../shared/rows.js'

type NotificationView = Static<typeof Notification>
interface Row {
  seq: string | number; id: string; event: NotificationView['event']; shipment_id: string | number; status: NotificationView['status']
  next_attempt_at: Date | string | null; delivered_at: Date | string | null; occurred_at: Date | string; created_at: Date | string
}


async function withAttempts(platform: Pick<Platform, 'db'>, rows: Row[]): Promise<NotificationView[]> {
  const byId = await attemptsByDelivery(platform, rows.map((r) => r.id))
  return rows.map((r) => ({
    notification_id: r.id, event: r.event, shipment_id: Number(r.shipment_id), status: r.status,
    attempts: byId.get(r.id) ?? [],
    next_attempt_at: isoOrNull(r.next_attempt_at), delivered_at: isoOrNull(r.delivered_at), occurred_at: isoOrNull(r.occurred_at)!, created_at: isoOrNull(r.created_at)!,
  }))
}

const COLUMNS = sql`seq, id, event, shipment_id, status, next_attempt_at, delivered_at, occurred_at, created_at`

/** Carrier API: the delivery log of the carrier's webhooks, newest first, and manual redelivery. */
export const notificationRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/notifications', {
    schema: { tags: ['carrier API'], summary: 'Delivery log: every notification with every attempt (newest first), paginated', querystring: NotificationsQuery, response: { 200: NotificationList, ...errorResponses } },
  }, async (req, reply) => {
    const carrierId = carrierIdOf(req)
    const q = req.query
    // Pages of `limit` rows; flat at any size (outbox-listing.ts). `next_cursor` is links.next's cursor.
    const paging = pageRequest({ perPage: q.limit, page: q.page })
    const after = requestCursor(q.cursor, 'number', paging)
    const reads = readsOf(platform, reply)
    const listed = await listOutbox<Row>(reads.db, { target: 'carrier', carrierId }, { status: q.status, shipmentId: q.shipment_id }, COLUMNS, paging.perPage, paging.page, after)
    const keyset = { next: nextCursor(listed.hasMore, listed.last, paging.page) }
    const { links, meta } = pageOf(req, paging, listed.total, listed.rows.length, keyset)
    return { data: await withAttempts(reads, listed.rows), links, meta: { next_cursor: keyset.next ?? null, ...meta } }
  })

  app.post('/notifications/:notification_id/redeliver', {
    schema: { tags: ['carrier API'], summary: 'Send a notification again now (same notification_id, fresh retry schedule)', params: NotificationIdParams, response: { 202: NotificationEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req, reply) => {
    const carrierId = carrierIdOf(req)
    const { notification_id } = req.params
    if (!(await requeue(platform.db, carrierId, notification_id))) throw new NotFoundError('Notification')
    kickDispatchers()
    const rows = (await sql<Row>`select ${COLUMNS} from carrier_notifications where id = ${notification_id}`.execute(platform.db)).rows
    const [notification] = await withAttempts(platform, rows)
    if (!notification) throw new NotFoundError('Notification')
    return reply.code(202).send({ notification })
  })
}
