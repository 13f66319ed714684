import { type Kysely, sql } from 'kysely'

// Frozen once landed: tariffs with their zone/rate table; one `active` per service type.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('tariffs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('carrier_id', 'text', (c) => c.notNull())
    .addColumn('service_type_id', 'integer', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('volumetric_divisor', 'double precision', (c) => c.notNull())
    .addColumn('zones', 'jsonb')
    .addColumn('rates', 'jsonb')
    .addColumn('active', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('rates_published_at', 'timestamptz')
    .addColumn('activated_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('tariffs_carrier_idx').on('tariffs').columns(['carrier_id', 'created_at']).execute()
  await db.schema.createIndex('tariffs_active_idx').on('tariffs').columns(['service_type_id']).where(sql.ref('active'), '=', true).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tariffs').execute()
}
