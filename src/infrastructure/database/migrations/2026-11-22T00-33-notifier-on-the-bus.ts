import { type Kysely, sql } from 'kysely'

// Frozen once landed: the notifier reads relayed events from the bus and the shipment expiry runs
// on the bus timers (bus_timers), so the notifier's own checkpoint and timer table go. Expiry timers
// still pending move to bus_timers under the ids and message shape of src/processes/shipment-expiry.ts.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    insert into bus_timers (id, subject, ordering_key, data, fire_at)
    select 'expire-shipment-' || shipment_id, 'commands.shipment.expire', 'shipment-' || shipment_id,
      jsonb_build_object('shipment_id', shipment_id, 'fire_at', to_char(fire_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')), fire_at
    from shipment_expiry_timers
    on conflict (id) do nothing`.execute(db)
  await sql`drop table shipment_expiry_timers`.execute(db)
  await sql`drop table notifier_checkpoints`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create table notifier_checkpoints (name text primary key, checkpoint text not null, updated_at timestamptz not null default now())`.execute(db)
  await sql`
    create table shipment_expiry_timers (
      shipment_id bigint primary key, fire_at timestamptz not null, leased_until timestamptz,
      attempts integer not null default 0, last_error text)`.execute(db)
  await sql`create index shipment_expiry_timers_due_idx on shipment_expiry_timers (fire_at)`.execute(db)
}
