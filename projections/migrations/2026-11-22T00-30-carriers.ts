import type { Kysely } from 'kysely'

// Frozen once landed: carrier hub read models (carriers, their HMAC secrets, service types).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('carriers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('integration', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('access_mode', 'text', (c) => c.notNull())
    .addColumn('certification_status', 'text', (c) => c.notNull())
    .addColumn('notification_url', 'text')
    .addColumn('quote_url', 'text')
    .addColumn('quote_mode', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('carriers_organization_idx').on('carriers').columns(['organization_id', 'created_at']).execute()
  await db.schema.createTable('carrier_secrets')
    .addColumn('secret_id', 'text', (c) => c.primaryKey())
    .addColumn('carrier_id', 'text', (c) => c.notNull())
    .addColumn('secret_encrypted', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .execute()
  await db.schema.createIndex('carrier_secrets_carrier_idx').on('carrier_secrets').columns(['carrier_id']).execute()
  await db.schema.createTable('service_types')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('carrier_id', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('service_types_carrier_code_key', ['carrier_id', 'code'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['service_types', 'carrier_secrets', 'carriers']) await db.schema.dropTable(t).execute()
}
