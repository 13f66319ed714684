import { type CompiledQuery, type Kysely, sql } from 'kysely'
import { traceparentOf } from '../notifications/outbox.js'
import { countInserted } from '../notifications/outbox-counts.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { READ_MODEL_SCHEMA } from '../infrastructure/database/migrate.js'
import { publicId } from '../shared/ids.js'
import { json } from '../shared/rows.js'
import { matches } from './event-patterns.js'
import { organizationEventOf } from './organization-events.js'
import type { Subscription, SubscriptionsCache } from './subscriptions-cache.js'

/** The body of an organization webhook (DESIGN §3.9); `id` is also the webhook-id header. */
export interface OrganizationWebhookBody { id: string; type: string; occurred_at: string; data: Record<string, unknown> }

export interface WebhookPlan {
  statement: CompiledQuery | undefined
  ran(rows: unknown[]): void
  /** Filled by ran(): the events whose deliveries were written now (not duplicates). */
  created: Set<number>
}

/** The live subscriptions of these organizations, oldest first. */
async function liveSubscriptions(db: Kysely<any>, orgs: string[]): Promise<Map<string, Subscription[]>> {
  const subs = (await sql<{ id: string; organization_id: string; events: string[] | string }>`
    select id, organization_id, events from ${sql.id(READ_MODEL_SCHEMA, 'webhooks')}
    where organization_id = any(${orgs}::text[]) and deleted_at is null order by created_at, id`.execute(db)).rows
  const byOrg = new Map<string, Subscription[]>()
  for (const s of subs) {
    const list = byOrg.get(s.organization_id) ?? byOrg.set(s.organization_id, []).get(s.organization_id)!
    list.push({ id: s.id, events: json<string[]>(s.events) })
  }
  return byOrg
}

/**
 * Plans the outbox rows of a batch of events for the organization webhooks listening to them: one
 * look-up of the live subscriptions of the events' organizations (through `db`, which may be the
 * intake's transaction: the read model is named by schema; none for those `cache` holds), and one insert returned to run in the
 * intake's batch. Idempotent per (event, webhook) by the outbox's unique key, however often the bus
 * delivers an event; a webhook created after an event is not told of it.
 */
export async function planOrganizationWebhooks(db: Kysely<any>, events: RecordedEvent[], cache?: SubscriptionsCache): Promise<WebhookPlan> {
  const notices = events.map((e) => organizationEventOf(e))
  const orgs = [...new Set(notices.flatMap((n) => (n ? [n.organization_id] : [])))]
  const created = new Set<number>()
  if (orgs.length === 0) return { statement: undefined, created, ran: () => undefined }
  const load = (missing: string[]) => liveSubscriptions(db, missing)
  const byOrg = cache ? await cache.of(orgs, load) : await load(orgs)
  const rows: Array<{ id: string; eventId: string; webhookId: string; organizationId: string; type: string; occurredAt: string; payload: string; traceparent: string | null; subject: string; index: number }> = []
  events.forEach((e, index) => {
    const n = notices[index]
    if (!n) return
    for (const w of byOrg.get(n.organization_id) ?? []) {
      if (!matches(w.events, n.type)) continue
      const id = publicId('msg')
      const body: OrganizationWebhookBody = { id, type: n.type, occurred_at: e.metadata.occurred_at, data: n.data }
      rows.push({ id, eventId: e.id, webhookId: w.id, organizationId: n.organization_id, type: n.type, occurredAt: e.metadata.occurred_at, payload: JSON.stringify(body), traceparent: traceparentOf(e), subject: e.streamId, index })
    }
  })
  if (rows.length === 0) return { statement: undefined, created, ran: () => undefined }
  const indexOf = new Map(rows.map((r) => [r.id, r.index]))
  // In the events' order (the dispatcher and the delivery log go by seq); a copy already stored is skipped.
  const insert = sql`
    insert into carrier_notifications (id, target, source_event_id, webhook_id, organization_id, event, occurred_at, payload, traceparent, subject, next_attempt_at)
    select id, 'webhook', source_event_id, webhook_id, organization_id, event, occurred_at, payload, traceparent, subject, now()
    from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.eventId)}::text[], ${rows.map((r) => r.webhookId)}::text[],
      ${rows.map((r) => r.organizationId)}::text[], ${rows.map((r) => r.type)}::text[], ${rows.map((r) => r.occurredAt)}::timestamptz[],
      ${rows.map((r) => r.payload)}::text[], ${rows.map((r) => r.traceparent)}::text[], ${rows.map((r) => r.subject)}::text[]) with ordinality
      as u(id, source_event_id, webhook_id, organization_id, event, occurred_at, payload, traceparent, subject, ord)
    order by ord
    on conflict (source_event_id, webhook_id) do nothing
    returning id, target, webhook_id as owner_id, status, created_at`
  // The delivery log's counts move in the same statement as the rows (src/notifications/outbox-counts.ts).
  const statement = sql`with inserted as (${insert}), counted as (${countInserted('inserted')}) select id from inserted`.compile(db)
  return {
    statement, created,
    ran(result) { for (const row of result as Array<{ id: string }>) created.add(indexOf.get(row.id)!) },
  }
}
