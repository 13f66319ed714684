import type { Database } from '../infrastructure/database/database.js'
import { type CompiledQuery, type Kysely, sql } from 'kysely'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { NotificationBody, NotificationEvent } from '../../schemas/events/notifications.js'
import { publicId } from '../shared/ids.js'
import { carrierOfCreated, NOTIFIED_EVENTS, notifiable, shipmentIdOf } from './notification-events.js'
import { idOf } from '../../schemas/events/streams.js'
import { ShipmentEvents } from '../../schemas/events/shipments.js'
import { isEvent } from '../../schemas/events/event-map.js'
import { textOf } from '../infrastructure/event-store/payload.js'
import { countInserted, countMoved, OWNER } from './outbox-counts.js'

/**
 * The durable outbox of every outgoing webhook (DESIGN §3.6, §3.9, §5: attempts live in the
 * database): carrier notifications (target `carrier`) and organization webhooks (target `webhook`,
 * rows written by src/webhooks/enqueue.ts). Rows are written by the notifier's bus consumers and
 * worked off by the one dispatcher, whatever their target.
 */

export type OutboxTarget = { target: 'carrier'; carrier_id: string; webhook_id: null } | { target: 'webhook'; carrier_id: null; webhook_id: string }

/** The event's trace, when it was traced. */
export const traceparentOf = (e: RecordedEvent): string | null =>
  typeof e.metadata.traceparent === 'string' ? e.metadata.traceparent : null

export type DueNotification = OutboxTarget & {
  id: string
  payload: string
  attempts: number
  round_attempts: number
  /** The source event's trace, continued by the call (null: untraced). */
  traceparent: string | null
  /** The event the webhook is about (its audit leaf goes out with it). */
  source_event_id: string | null
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
export async function enqueueNotification(trx: Kysely<Database>, e: RecordedEvent): Promise<EnqueueOutcome> {
  return (await enqueueNotifications(trx, [e]))[0]!
}

type Carrier = { carrierId: string | null; integration: string }

/**
 * enqueueNotification() for several events at once, with the outcome of each as if they had been
 * enqueued one by one in this order (a later event knows the shipments of the ShipmentCreated
 * before it, not after it), in at most two statements: a look-up of the shipments of the later
 * events, and one insert into notifier_shipments and carrier_notifications. An event refused as
 * `unknown_shipment` writes nothing.
 */
export async function enqueueNotifications(trx: Kysely<Database>, events: RecordedEvent[]): Promise<EnqueueOutcome[]> {
  const plan = await planNotifications(trx, events)
  if (plan.statement) plan.ran((await trx.executeQuery(plan.statement)).rows)
  return plan.outcomes
}

/**
 * enqueueNotifications() in two steps: the look-up runs now through `db`; the write is returned, to
 * run elsewhere (the notifier's one-trip batch), and `ran` with its rows completes `outcomes`.
 */
export interface NotificationPlan {
  statement: CompiledQuery | undefined
  outcomes: EnqueueOutcome[]
  ran(rows: unknown[]): void
}

export async function planNotifications(db: Kysely<Database>, events: RecordedEvent[]): Promise<NotificationPlan> {
  const relevant = (e: RecordedEvent) => NOTIFIED_EVENTS[e.type] !== undefined && idOf.shipment(e.streamId) !== null
  const later = [...new Set(events.filter((e) => relevant(e) && !isEvent(ShipmentEvents, 'ShipmentCreated', e)).map(shipmentIdOf))]
  const stored = new Map<number, Carrier>()
  if (later.length > 0) {
    const r = await sql<{ shipment_id: string | number; carrier_id: string | null; integration: string }>`
      select shipment_id, carrier_id, integration from notifier_shipments where shipment_id = any(${later}::bigint[])`.execute(db)
    for (const row of r.rows) stored.set(Number(row.shipment_id), { carrierId: row.carrier_id, integration: row.integration })
  }
  const outcomes: EnqueueOutcome[] = []
  const shipments: Array<{ shipmentId: number } & Carrier> = []
  const rows: Array<{ id: string; event: RecordedEvent; carrierId: string; kind: NotificationEvent; shipmentId: number; body: NotificationBody }> = []
  const rowOf = new Map<string, number>()
  for (const e of events) {
    const kind = NOTIFIED_EVENTS[e.type]
    if (!kind || !relevant(e)) { outcomes.push('none'); continue }
    const shipmentId = shipmentIdOf(e)
    let shipment: Carrier
    if (isEvent(ShipmentEvents, 'ShipmentCreated', e)) {
      shipment = carrierOfCreated(e)
      shipments.push({ shipmentId, ...shipment })
      // Stored by the insert below unless a row is there already (on conflict do nothing): what the next events see.
      if (!stored.has(shipmentId)) stored.set(shipmentId, shipment)
    } else {
      const known = stored.get(shipmentId)
      if (!known) { outcomes.push('unknown_shipment'); continue }
      shipment = known
    }
    if (!notifiable(shipment)) { outcomes.push('none'); continue }
    const id = publicId('ntf')
    rowOf.set(id, outcomes.length)
    outcomes.push('duplicate') // until the insert reports it
    rows.push({ id, event: e, carrierId: shipment.carrierId, kind, shipmentId,
      body: { notification_id: id, event: kind, shipment_id: shipmentId, carrier_id: shipment.carrierId, occurred_at: e.metadata.occurred_at } })
  }
  const rememberShipments = shipments.length === 0 ? undefined : sql`
    insert into notifier_shipments (shipment_id, carrier_id, integration)
    select * from unnest(${shipments.map((s) => s.shipmentId)}::bigint[], ${shipments.map((s) => s.carrierId)}::text[], ${shipments.map((s) => s.integration)}::text[])
    on conflict (shipment_id) do nothing`
  if (rows.length === 0) {
    return { statement: rememberShipments?.compile(db), outcomes, ran: () => undefined }
  }
  // In the events' order (the dispatcher and the delivery log go by seq); a second copy of an event
  // in the same statement is skipped like one already stored.
  const insert = sql`
    insert into carrier_notifications (id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, traceparent, subject, next_attempt_at)
    select id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, traceparent, subject, now()
    from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.event.id)}::text[], ${rows.map((r) => r.carrierId)}::text[],
      ${rows.map((r) => r.kind)}::text[], ${rows.map((r) => r.shipmentId)}::bigint[], ${rows.map((r) => r.event.metadata.occurred_at)}::timestamptz[],
      ${rows.map((r) => JSON.stringify(r.body))}::text[], ${rows.map((r) => traceparentOf(r.event))}::text[], ${rows.map((r) => r.event.streamId)}::text[]) with ordinality
      as u(id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, traceparent, subject, ord)
    order by ord
    on conflict (source_event_id, carrier_id) do nothing
    returning id, target, carrier_id as owner_id, status, created_at`
  const remembered = rememberShipments ? sql`remembered as (${rememberShipments}), ` : sql``
  return {
    // The listing's counts move in the same statement as the rows (src/notifications/outbox-counts.ts).
    statement: sql`with ${remembered}inserted as (${insert}), counted as (${countInserted('inserted')}) select id from inserted`.compile(db),
    outcomes,
    ran(rows) {
      for (const row of rows) {
        const id = textOf(row, 'id')
        if (id !== undefined) outcomes[rowOf.get(id)!] = 'created'
      }
    },
  }
}

/**
 * Claims due notifications for `leaseMs`; rows claimed by another process are skipped. One subject's
 * rows (the stream of their events) to one endpoint go in order while the endpoint answers: a row
 * waits while an earlier one of its subject and endpoint is unsent or in flight. An earlier one that
 * failed and waits for its retry holds nothing back (the body's `occurred_at` orders them then).
 */
export async function claimDue(db: Kysely<Database>, limit: number, leaseMs: number): Promise<DueNotification[]> {
  // A materialized CTE: a LIMIT subquery under IN may be re-run by the planner and claim more rows.
  const r = await sql<DueNotification>`
    with due as materialized (
      select seq from carrier_notifications c
      where status = 'pending' and next_attempt_at <= clock_timestamp() and (leased_until is null or leased_until < clock_timestamp())
        and (c.subject is null or not exists (
          select 1 from carrier_notifications e
          where e.subject = c.subject and e.status = 'pending' and e.seq < c.seq
            and e.target = c.target and e.carrier_id is not distinct from c.carrier_id and e.webhook_id is not distinct from c.webhook_id
            and (e.round_attempts = 0 or e.leased_until >= clock_timestamp())))
      order by next_attempt_at, seq
      limit ${limit}
      for update skip locked)
    update carrier_notifications n set leased_until = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8)
    from due where n.seq = due.seq
    returning n.id, n.target, n.carrier_id, n.webhook_id, n.payload, n.attempts, n.round_attempts, n.traceparent, n.source_event_id`.execute(db)
  return r.rows
}

/** Keeps claimed rows this process's while their calls run (a row already settled is left alone). */
export async function renewLeases(db: Kysely<Database>, ids: string[], leaseMs: number): Promise<void> {
  await sql`
    update carrier_notifications set leased_until = clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8)
    where id = any(${ids}::text[]) and status = 'pending'`.execute(db)
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
export async function recordAttempts(db: Kysely<Database>, results: AttemptResult[], delaysMs: number[]): Promise<void> {
  if (results.length === 0) return
  const ok = (r: AttemptResult) => r.statusCode >= 200 && r.statusCode < 300
  const next = results.map((r): { status: string; delay: number | null } => {
    if (ok(r)) return { status: 'delivered', delay: null }
    const delay = delaysMs[r.roundAttempt - 1]
    return delay === undefined ? { status: 'failed', delay: null } : { status: 'pending', delay }
  })
  await db.transaction().execute(async (trx) => {
    await sql`
      insert into carrier_notification_attempts (notification_id, attempt, attempted_at, status_code, latency_ms, error, response_excerpt)
      select * from unnest(${results.map((r) => r.id)}::text[], ${results.map((r) => r.attempt)}::int[],
        ${results.map((r) => r.attemptedAt.toISOString())}::timestamptz[], ${results.map((r) => (r.statusCode === 0 ? null : r.statusCode))}::int[],
        ${results.map((r) => r.latencyMs)}::float8[], ${results.map((r) => r.error)}::text[], ${results.map((r) => r.excerpt)}::text[])`.execute(trx)
    // Only pending rows move (to delivered, failed or pending again): their counts move with them.
    await sql`
      with moved as (update carrier_notifications n set
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
      where n.id = u.id and n.status = 'pending'
      returning n.target, coalesce(n.carrier_id, n.webhook_id) as owner_id, n.created_at, 'pending' as was, n.status)
      ${countMoved('moved')}`.execute(trx)
  })
}

/** Manual redelivery: the notification goes out again now, on a fresh retry schedule, with the same id. */
export async function requeue(db: Kysely<Database>, carrierId: string, id: string): Promise<boolean> {
  return requeueOf(db, { carrierId }, id)
}

/** requeue() for either target: the row must belong to the given carrier or webhook (tenant check). */
export async function requeueOf(db: Kysely<Database>, owner: { carrierId: string } | { webhookId: string }, id: string): Promise<boolean> {
  const ownedBy = 'carrierId' in owner ? sql`carrier_id = ${owner.carrierId}` : sql`webhook_id = ${owner.webhookId}`
  // The status before, read under the row's lock: the counts move from it (delivered or failed) to pending.
  const r = await sql<{ n: number }>`
    with was as materialized (select seq, status as was from carrier_notifications where id = ${id} and ${ownedBy} for update),
    moved as (
      update carrier_notifications n set status = 'pending', round_attempts = 0, next_attempt_at = clock_timestamp(), leased_until = null, updated_at = clock_timestamp()
      from was where n.seq = was.seq
      returning n.target, ${OWNER} as owner_id, n.created_at, was.was, n.status),
    counted as (${countMoved('moved')})
    select count(*)::int as n from moved`.execute(db)
  return r.rows[0]?.n === 1
}

/** Ends a deleted webhook's pending deliveries as failed, in its log, rather than one by one later. */
export async function failPendingDeliveries(db: Kysely<Database>, webhookId: string): Promise<void> {
  await sql`
    with moved as (
      update carrier_notifications set status = 'failed', next_attempt_at = null, last_error = 'the webhook was deleted', updated_at = clock_timestamp()
      where target = 'webhook' and webhook_id = ${webhookId} and status = 'pending'
      returning target, ${OWNER} as owner_id, created_at, 'pending' as was, status)
    ${countMoved('moved')}`.execute(db)
}
