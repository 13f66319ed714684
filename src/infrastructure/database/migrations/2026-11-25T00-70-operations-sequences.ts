import { type Kysely, sql } from 'kysely'

// Frozen once landed: integer ids of blueprints, workflows and routes (DESIGN §3.4) come from
// sequences at command time, as shipments' do.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence blueprint_id_seq`.execute(db)
  await sql`create sequence workflow_id_seq`.execute(db)
  await sql`create sequence route_id_seq`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop sequence route_id_seq`.execute(db)
  await sql`drop sequence workflow_id_seq`.execute(db)
  await sql`drop sequence blueprint_id_seq`.execute(db)
}
