import type { Kysely } from 'kysely'

// Frozen once landed: routes (DESIGN §3.9), one row per `route-<id>` stream, and the membership of
// tasks in routes, one row per routed task (the primary key keeps a task on one route at most).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('routes')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('shift_date', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_before_block', 'text')
    .addColumn('driver_id', 'text')
    .addColumn('vehicle_id', 'text')
    .addColumn('capacity_grams', 'bigint')
    .addColumn('capacity_volume_cm3', 'bigint')
    .addColumn('capacity_packages', 'bigint')
    .addColumn('start_address', 'jsonb')
    .addColumn('end_address', 'jsonb')
    .addColumn('blocked_reason', 'text')
    .addColumn('task_count', 'integer', (c) => c.notNull())
    .addColumn('published_at', 'timestamptz')
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('stream_version', 'integer', (c) => c.notNull())
    .execute()
  // Listings are per organization by date; a driver's are by driver.
  await db.schema.createIndex('routes_organization_idx').on('routes').columns(['organization_id', 'shift_date', 'id']).execute()
  await db.schema.createIndex('routes_driver_idx').on('routes').columns(['driver_id']).execute()

  await db.schema.createTable('route_tasks')
    .addColumn('task_ulid', 'text', (c) => c.primaryKey())
    .addColumn('route_id', 'bigint', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('shipment_id', 'bigint')
    .addColumn('load_grams', 'bigint', (c) => c.notNull())
    .addColumn('load_volume_cm3', 'bigint', (c) => c.notNull())
    .addColumn('load_packages', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('route_tasks_route_idx').on('route_tasks').columns(['route_id', 'position']).execute()
  await db.schema.createIndex('tasks_route_idx').on('tasks').columns(['route_id']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('tasks_route_idx').execute()
  await db.schema.dropTable('route_tasks').execute()
  await db.schema.dropTable('routes').execute()
}
