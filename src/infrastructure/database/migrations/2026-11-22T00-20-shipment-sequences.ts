import { type Kysely, sql } from 'kysely'

// Frozen once landed: shipment and package ids are int64 from sequences taken at command time,
// before the events are appended (DESIGN §2). Gaps (a failed validation after nextval) are fine.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence shipment_id_seq`.execute(db)
  await sql`create sequence package_id_seq`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop sequence package_id_seq`.execute(db)
  await sql`drop sequence shipment_id_seq`.execute(db)
}
