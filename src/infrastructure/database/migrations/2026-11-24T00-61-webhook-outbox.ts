import { type Kysely, sql } from 'kysely'

// Frozen once landed: one outbox for every outgoing webhook (DESIGN §3.6, §3.9). The carrier
// notifications table gains a target: `carrier` rows are as before; `webhook` rows are organization
// webhook deliveries, keyed by (event, webhook) as carrier rows are by (event, carrier). One
// dispatcher claims both kinds; the attempts table is shared (notification_id = the row's id).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table carrier_notifications add column target text not null default 'carrier'`.execute(db)
  await sql`alter table carrier_notifications add column webhook_id text`.execute(db)
  await sql`alter table carrier_notifications add column organization_id text`.execute(db)
  await sql`alter table carrier_notifications alter column carrier_id drop not null`.execute(db)
  await sql`alter table carrier_notifications alter column shipment_id drop not null`.execute(db)
  await sql`
    alter table carrier_notifications add constraint carrier_notifications_target_check check (
      (target = 'carrier' and carrier_id is not null and shipment_id is not null)
      or (target = 'webhook' and webhook_id is not null and organization_id is not null))`.execute(db)
  // Nulls are distinct: carrier rows (no webhook_id) never meet this key.
  await sql`alter table carrier_notifications add constraint carrier_notifications_webhook_source_key unique (source_event_id, webhook_id)`.execute(db)
  await sql`create index carrier_notifications_webhook_idx on carrier_notifications (webhook_id, seq) where webhook_id is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from carrier_notifications where target = 'webhook'`.execute(db)
  await sql`drop index carrier_notifications_webhook_idx`.execute(db)
  await sql`alter table carrier_notifications drop constraint carrier_notifications_webhook_source_key`.execute(db)
  await sql`alter table carrier_notifications drop constraint carrier_notifications_target_check`.execute(db)
  await sql`alter table carrier_notifications alter column shipment_id set not null`.execute(db)
  await sql`alter table carrier_notifications alter column carrier_id set not null`.execute(db)
  for (const c of ['organization_id', 'webhook_id', 'target']) await sql`alter table carrier_notifications drop column ${sql.id(c)}`.execute(db)
}
