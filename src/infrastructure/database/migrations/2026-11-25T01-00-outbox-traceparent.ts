import { type Kysely, sql } from 'kysely'

// Frozen once landed: the W3C traceparent of the event a webhook row came from, so the call that
// delivers it (maybe hours later, from another process) continues that event's trace.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table carrier_notifications add column traceparent text`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table carrier_notifications drop column traceparent`.execute(db)
}
