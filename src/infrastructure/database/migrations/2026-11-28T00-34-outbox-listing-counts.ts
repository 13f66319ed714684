import { type Kysely, sql } from 'kysely'

// Frozen once landed. The outbox's two delivery logs, flat at a million (issue 32): a carrier's
// `GET /notifications` and an organization webhook's `GET /webhooks/{id}/deliveries` read one
// owner's index range in the order (created_at desc, seq desc), and their `meta.total` and deep
// pages come from the count of each owner's rows per status and UTC day of created_at, kept by the
// statements that write the rows (src/notifications/outbox-counts.ts). Backfilled from the rows.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table outbox_listing_counts (
      target text not null,
      owner_id text not null,
      status text not null,
      day date not null,
      n bigint not null,
      constraint outbox_listing_counts_pk primary key (target, owner_id, status, day)
    )`.execute(db)
  await sql`
    insert into outbox_listing_counts (target, owner_id, status, day, n)
    select target, coalesce(carrier_id, webhook_id), status, (created_at at time zone 'UTC')::date, count(*)
    from carrier_notifications group by 1, 2, 3, 4`.execute(db)
  // One per owner and filter, in the listing's order: each page stops after its rows.
  const indexes: [string, string, string][] = [
    ['carrier_notifications_carrier_list_idx', 'carrier_id', 'carrier_id, created_at desc, seq desc'],
    ['carrier_notifications_carrier_status_list_idx', 'carrier_id', 'carrier_id, status, created_at desc, seq desc'],
    ['carrier_notifications_carrier_shipment_list_idx', 'carrier_id', 'carrier_id, shipment_id, created_at desc, seq desc'],
    ['carrier_notifications_webhook_list_idx', 'webhook_id', 'webhook_id, created_at desc, seq desc'],
    ['carrier_notifications_webhook_status_list_idx', 'webhook_id', 'webhook_id, status, created_at desc, seq desc'],
  ]
  for (const [name, owner, columns] of indexes) {
    await sql`create index ${sql.id(name)} on carrier_notifications (${sql.raw(columns)}) where ${sql.id(owner)} is not null`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of ['carrier_notifications_carrier_list_idx', 'carrier_notifications_carrier_status_list_idx', 'carrier_notifications_carrier_shipment_list_idx',
    'carrier_notifications_webhook_list_idx', 'carrier_notifications_webhook_status_list_idx']) await sql`drop index ${sql.id(name)}`.execute(db)
  await sql`drop table outbox_listing_counts`.execute(db)
}
