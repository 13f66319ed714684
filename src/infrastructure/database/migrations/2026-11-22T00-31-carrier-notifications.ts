import { type Kysely, sql } from 'kysely'

// Frozen once landed: carrier webhooks (DESIGN §3.6) and the shipment expiry timer (§3.5).
// A notification row is created once per (event, carrier) by the notifier's reader, in the same
// transaction that moves its checkpoint; the dispatcher claims due rows with a lease, so a process
// that dies mid-call leaves the row to be retried, with the same notification id, after the lease.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table carrier_notifications (
      seq bigint generated always as identity primary key,
      id text not null unique,
      source_event_id text not null,
      carrier_id text not null,
      event text not null,
      shipment_id bigint not null,
      occurred_at timestamptz not null,
      payload text not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      -- Attempts since the schedule last (re)started: a manual redelivery starts it again.
      round_attempts integer not null default 0,
      next_attempt_at timestamptz,
      leased_until timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint carrier_notifications_source_key unique (source_event_id, carrier_id),
      constraint carrier_notifications_status_check check (status in ('pending', 'delivered', 'failed'))
    )`.execute(db)
  await sql`create index carrier_notifications_due_idx on carrier_notifications (next_attempt_at) where status = 'pending'`.execute(db)
  await sql`create index carrier_notifications_carrier_idx on carrier_notifications (carrier_id, seq)`.execute(db)
  await sql`
    create table carrier_notification_attempts (
      id bigint generated always as identity primary key,
      notification_id text not null,
      attempt integer not null,
      attempted_at timestamptz not null,
      status_code integer,
      latency_ms double precision not null,
      error text,
      response_excerpt text
    )`.execute(db)
  await sql`create index carrier_notification_attempts_notification_idx on carrier_notification_attempts (notification_id, id)`.execute(db)
  await sql`
    create table notifier_checkpoints (
      name text primary key,
      checkpoint text not null,
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`
    create table notifier_shipments (
      shipment_id bigint primary key,
      carrier_id text,
      integration text not null
    )`.execute(db)
  await sql`
    create table shipment_expiry_timers (
      shipment_id bigint primary key,
      fire_at timestamptz not null,
      leased_until timestamptz,
      attempts integer not null default 0,
      last_error text
    )`.execute(db)
  await sql`create index shipment_expiry_timers_due_idx on shipment_expiry_timers (fire_at)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['shipment_expiry_timers', 'notifier_shipments', 'notifier_checkpoints', 'carrier_notification_attempts', 'carrier_notifications']) {
    await sql`drop table ${sql.id(t)}`.execute(db)
  }
}
