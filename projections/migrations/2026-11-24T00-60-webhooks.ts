import type { Kysely } from 'kysely'

// Frozen once landed: organization webhooks (DESIGN §3.9). The sealed secret is read by the
// dispatcher at send time; a deleted webhook keeps its row (deleted_at) for its delivery log.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addColumn('secret_encrypted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('deleted_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('webhooks_organization_idx').on('webhooks').columns(['organization_id', 'created_at', 'id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhooks').execute()
}
