import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { NotificationEnvelope, NotificationIdParams, NotificationList, NotificationsQuery } from '../../schemas/api/notifications.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { requeue } from './outbox.js'
import { kickDispatchers } from './dispatcher.js'

interface Row {
  seq: string | number; id: string; event: string; shipment_id: string | number; status: string
  next_attempt_at: Date | string | null; delivered_at: Date | string | null; occurred_at: Date | string; created_at: Date | string
}
interface AttemptRow {
  notification_id: string; attempt: number; attempted_at: Date | string; status_code: number | null; latency_ms: number; error: string | null
}

const iso = (d: Date | string | null) => (d === null ? null : (d instanceof Date ? d : new Date(d)).toISOString())

async function withAttempts(platform: Platform, rows: Row[]) {
  const ids = rows.map((r) => r.id)
  const attempts = ids.length === 0 ? [] : (await sql<AttemptRow>`
    select notification_id, attempt, attempted_at, status_code, latency_ms, error from carrier_notification_attempts
    where notification_id = any(${ids}::text[]) order by id`.execute(platform.db)).rows
  const byId = new Map<string, AttemptRow[]>()
  for (const a of attempts) (byId.get(a.notification_id) ?? byId.set(a.notification_id, []).get(a.notification_id)!).push(a)
  return rows.map((r) => ({
    notification_id: r.id, event: r.event, shipment_id: Number(r.shipment_id), status: r.status,
    attempts: (byId.get(r.id) ?? []).map((a) => ({ attempt: a.attempt, attempted_at: iso(a.attempted_at)!, status_code: a.status_code, latency_ms: Number(a.latency_ms), error: a.error })),
    next_attempt_at: iso(r.next_attempt_at), delivered_at: iso(r.delivered_at), occurred_at: iso(r.occurred_at)!, created_at: iso(r.created_at)!,
  }))
}

const COLUMNS = sql`seq, id, event, shipment_id, status, next_attempt_at, delivered_at, occurred_at, created_at`

/** Carrier API: the delivery log of the carrier's webhooks, newest first, and manual redelivery. */
export async function notificationRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  app.get('/notifications', {
    schema: { tags: ['carrier API'], summary: 'Delivery log: every notification with every attempt (newest first)', querystring: NotificationsQuery, response: { 200: NotificationList, ...errorResponses } },
  }, async (req) => {
    const carrierId = req.principal!.carrierId!
    const q = req.query as { status?: string; shipment_id?: number; limit?: number; cursor?: string }
    const limit = q.limit ?? 20
    let before: number | null = null
    if (q.cursor !== undefined) {
      before = /^\d+$/.test(q.cursor) ? Number(q.cursor) : NaN
      if (!Number.isSafeInteger(before)) throw ValidationError.field('cursor', 'The cursor is invalid.')
    }
    const rows = (await sql<Row>`
      select ${COLUMNS} from carrier_notifications
      where carrier_id = ${carrierId}
        ${q.status ? sql`and status = ${q.status}` : sql``}
        ${q.shipment_id ? sql`and shipment_id = ${q.shipment_id}` : sql``}
        ${before !== null ? sql`and seq < ${before}` : sql``}
      order by seq desc limit ${limit + 1}`.execute(platform.db)).rows
    const page = rows.slice(0, limit)
    return { data: await withAttempts(platform, page), meta: { next_cursor: rows.length > limit ? String(page.at(-1)!.seq) : null } }
  })

  app.post('/notifications/:notification_id/redeliver', {
    schema: { tags: ['carrier API'], summary: 'Send a notification again now (same notification_id, fresh retry schedule)', params: NotificationIdParams, response: { 202: NotificationEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req, reply) => {
    const carrierId = req.principal!.carrierId!
    const { notification_id } = req.params as { notification_id: string }
    if (!(await requeue(platform.db, carrierId, notification_id))) throw new NotFoundError('Notification')
    kickDispatchers()
    const rows = (await sql<Row>`select ${COLUMNS} from carrier_notifications where id = ${notification_id}`.execute(platform.db)).rows
    return reply.code(202).send({ notification: (await withAttempts(platform, rows))[0] })
  })
}
