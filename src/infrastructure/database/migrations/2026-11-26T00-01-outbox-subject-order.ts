import { type Kysely, sql } from 'kysely'

// Frozen once landed: the outbox's rows name the stream their event came from (`shipment-42`,
// `task-01K…`), so that the dispatcher sends one subject's webhooks to one endpoint in the order
// of their events while the endpoint answers (a row waits while an earlier one of its subject is
// unsent or in flight; one that failed and waits for its retry holds nothing back). Rows written
// before have no subject, except carrier rows, whose shipment names it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table carrier_notifications add column subject text`.execute(db)
  await sql`update carrier_notifications set subject = 'shipment-' || shipment_id where target = 'carrier' and status = 'pending'`.execute(db)
  await sql`
    create index carrier_notifications_subject_idx on carrier_notifications (subject, seq)
    where status = 'pending' and subject is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index carrier_notifications_subject_idx`.execute(db)
  await sql`alter table carrier_notifications drop column subject`.execute(db)
}
