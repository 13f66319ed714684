import { type Kysely, sql } from 'kysely'

// Frozen once landed: integer ids of service types come from a sequence at command time (DESIGN §2).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence service_type_id_seq`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop sequence service_type_id_seq`.execute(db)
}
