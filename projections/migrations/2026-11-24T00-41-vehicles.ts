import type { Kysely } from 'kysely'

// Frozen once landed: vehicles of carrier organizations; a null capacity column is unlimited.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('vehicles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plate', 'text', (c) => c.notNull())
    .addColumn('plate_key', 'text', (c) => c.notNull())
    .addColumn('capacity_grams', 'integer')
    .addColumn('capacity_volume_cm3', 'integer')
    .addColumn('capacity_packages', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('vehicles_organization_idx').on('vehicles').columns(['organization_id', 'created_at', 'id']).execute()
  await db.schema.createIndex('vehicles_plate_idx').on('vehicles').columns(['organization_id', 'plate_key']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('vehicles').execute()
}
