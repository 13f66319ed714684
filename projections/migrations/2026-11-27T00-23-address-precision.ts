import type { Kysely } from 'kysely'

// Frozen once landed: where an address's coordinates come from (DESIGN §3.10 geo_precision). Rows
// projected before stay null until a rebuild fills them by the same rule (the API derives it meanwhile).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('addresses').addColumn('geo_precision', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('addresses').dropColumn('geo_precision').execute()
}
