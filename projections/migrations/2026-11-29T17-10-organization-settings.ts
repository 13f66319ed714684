import { sql, type Kysely } from 'kysely'

// Frozen once landed: an organization's display settings (issue 37), kept by the
// organization_settings projection from OrganizationSettingsChanged.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('organization_settings')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('time_zone', 'text')
    .addColumn('delivery_attempt_messages', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('public_proof_photos', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('organization_settings').execute()
}
