import type { Kysely } from 'kysely'

// Frozen once landed: blueprints of carrier organizations and every version of each.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('blueprints')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('is_default', 'boolean', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('published_version', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('blueprints_organization_key_idx').on('blueprints').columns(['organization_id', 'key']).unique().execute()
  await db.schema.createIndex('blueprints_organization_idx').on('blueprints').columns(['organization_id', 'created_at', 'id']).execute()
  await db.schema.createTable('blueprint_versions')
    .addColumn('blueprint_id', 'integer', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('steps', 'jsonb', (c) => c.notNull())
    .addColumn('start_steps', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('drafted_at', 'timestamptz', (c) => c.notNull())
    .addColumn('published_at', 'timestamptz')
    .addPrimaryKeyConstraint('blueprint_versions_pk', ['blueprint_id', 'version'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('blueprint_versions').execute()
  await db.schema.dropTable('blueprints').execute()
}
