import { type Kysely, sql } from 'kysely'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { NotificationBody } from '../../schemas/events/notifications.js'
import { publicId } from '../shared/ids.js'
import { carrierOfCreated, NOTIFIED_EVENTS, notifiable, shipmentIdOf } from './notification-events.js'

/**
 * The durable outbox of carrier webhooks (DESIGN §3.6, §5: attempts live in the database).
 * Rows are written by the notifier's bus consumer and worked off by the dispatcher.
 */

export interface DueNotification {
  id: string
  carrier_id: string
  payload: string
  attempts: number
  round_attempts: number
}

/**
 * What became of one event: `created` (a row to deliver), `duplicate` (already enqueued: a
 * redelivery), `none` (not for a webhook), `unknown_shipment` (its ShipmentCreated not seen yet).
 */
export type EnqueueOutcome = 'created' | 'duplicate' | 'none' | 'unknown_shipment'

/**
 * Turns one shipment event into its notification row, in the caller's transaction. Idempotent per
 * (event, carrier) by the table's unique key, whatever the number of deliveries; the carrier of a
 * shipment is remembered from its ShipmentCreated (notifier_shipments) for the later events.
 */
export async function enqueueNotification(trx: Kysely<any>, e: RecordedEvent): Promise<EnqueueOutcome> {
  const kind = NOTIFIED_EVENTS[e.type]
  if (!kind || !e.streamId.startsWith('shipment-')) return 'none'
  const shipmentId = shipmentIdOf(e)
  let shipment: { carrierId: string | null; integration: string }
  if (e.type === 'ShipmentCreated') {
    shipment = carrierOfCreated(e)
    await sql`insert into notifier_shipments (shipment_id, carrier_id, integration) values (${shipmentId}, ${shipment.carrierId}, ${shipment.integration})
      on conflict (shipment_id) do nothing`.execute(trx)
  } else {
    const r = await sql<{ carrier_id: string | null; integration: string }>`
      select carrier_id, integration from notifier_shipments where shipment_id = ${shipmentId}`.execute(trx)
    const row = r.rows[0]
    if (!row) return 'unknown_shipment'
    shipment = { carrierId: row.carrier_id, integration: row.integration }
  }
  if (!notifiable(shipment)) return 'none'
  const id = publicId('ntf')
  const body: NotificationBody = { notification_id: id, event: kind, shipment_id: shipmentId, carrier_id: shipment.carrierId, occurred_at: e.metadata.occurred_at }
  const inserted = await sql`
    insert into carrier_notifications (id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, next_attempt_at)
    values (${id}, ${e.id}, ${shipment.carrierId}, ${kind}, ${shipmentId}, ${e.metadata.occurred_at}::timestamptz, ${JSON.stringify(body)}, now())
    on conflict (source_event_id, carrier_id) do nothing`.execute(trx)
  return Number(inserted.numAffectedRows ?? 0) > 0 ? 'created' : 'duplicate'
}

/** Claims due notifications for `leaseMs`; rows claimed by another process are skipped. */
export async function claimDue(db: Kysely<any>, limit: number, leaseMs: number): Promise<DueNotification[]> {
  // A materialized CTE: a LIMIT subquery under IN may be re-run by the planner and claim more rows.
  const r = await sql<DueNotification>`
    with due as materialized (
      select seq from carrier_notifications
      where status = 'pending' and next_attempt_at <= clock_timestamp() and (leased_until is null or leased_until < clock_timestamp())
      order by next_attempt_at
      limit ${limit}
      for update skip locked)
    update carrier_notifications n set leased_until = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8)
    from due where n.seq = due.seq
    returning n.id, n.carrier_id, n.payload, n.attempts, n.round_attempts`.execute(db)
  return r.rows
}

export interface AttemptResult {
  id: string
  attempt: number
  roundAttempt: number
  attemptedAt: Date
  statusCode: number
  latencyMs: number
  error: string | null
  excerpt: string | null
}

/**
 * Logs every attempt and moves each notification on: delivered on a 2xx; otherwise retried
 * after `delays[roundAttempt - 1]`, and `failed` once the schedule is used up.
 */
export async function recordAttempts(db: Kysely<any>, results: AttemptResult[], delaysMs: number[]): Promise<void> {
  if (results.length === 0) return
  const ok = (r: AttemptResult) => r.statusCode >= 200 && r.statusCode < 300
  const next = results.map((r) => {
    if (ok(r)) return { status: 'delivered', delay: null as number | null }
    const delay = delaysMs[r.roundAttempt - 1]
    return delay === undefined ? { status: 'failed', delay: null } : { status: 'pending', delay }
  })
  await db.transaction().execute(async (trx) => {
    await sql`
      insert into carrier_notification_attempts (notification_id, attempt, attempted_at, status_code, latency_ms, error, response_excerpt)
      select * from unnest(${results.map((r) => r.id)}::text[], ${results.map((r) => r.attempt)}::int[],
        ${results.map((r) => r.attemptedAt.toISOString())}::timestamptz[], ${results.map((r) => (r.statusCode === 0 ? null : r.statusCode))}::int[],
        ${results.map((r) => r.latencyMs)}::float8[], ${results.map((r) => r.error)}::text[], ${results.map((r) => r.excerpt)}::text[])`.execute(trx)
    await sql`
      update carrier_notifications n set
        status = u.status,
        attempts = greatest(n.attempts, u.attempt),
        round_attempts = u.round_attempt,
        next_attempt_at = case when u.status = 'pending' then clock_timestamp() + make_interval(secs => u.delay_ms / 1000.0) else null end,
        leased_until = null,
        last_status_code = u.status_code,
        last_error = u.error,
        delivered_at = case when u.status = 'delivered' then u.attempted_at else n.delivered_at end,
        updated_at = clock_timestamp()
      from unnest(${results.map((r) => r.id)}::text[], ${next.map((x) => x.status)}::text[], ${results.map((r) => r.attempt)}::int[],
        ${results.map((r) => r.roundAttempt)}::int[], ${next.map((x) => x.delay ?? 0)}::float8[],
        ${results.map((r) => (r.statusCode === 0 ? null : r.statusCode))}::int[], ${results.map((r) => r.error)}::text[],
        ${results.map((r) => r.attemptedAt.toISOString())}::timestamptz[])
        as u(id, status, attempt, round_attempt, delay_ms, status_code, error, attempted_at)
      where n.id = u.id and n.status = 'pending'`.execute(trx)
  })
}

/** Manual redelivery: the notification goes out again now, on a fresh retry schedule, with the same id. */
export async function requeue(db: Kysely<any>, carrierId: string, id: string): Promise<boolean> {
  const r = await sql`
    update carrier_notifications set status = 'pending', round_attempts = 0, next_attempt_at = clock_timestamp(), leased_until = null, updated_at = clock_timestamp()
    where id = ${id} and carrier_id = ${carrierId}`.execute(db)
  return Number(r.numAffectedRows ?? 0) === 1
}
