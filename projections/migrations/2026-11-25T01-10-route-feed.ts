import type { Kysely } from 'kysely'

// Frozen once landed: the live route progress feed (per-route state, every task's status and route,
// and the append-only feed whose `seq` is the server-sent events' id).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('route_feed_routes')
    .addColumn('route_id', 'bigint', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('driver_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('blocked_reason', 'text')
    .addColumn('tasks', 'jsonb', (c) => c.notNull())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createTable('route_feed_tasks')
    .addColumn('ulid', 'text', (c) => c.primaryKey())
    .addColumn('route_id', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createTable('route_feed')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('route_id', 'bigint', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('position', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('route_feed_route_idx').on('route_feed').columns(['route_id', 'seq']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('route_feed').execute()
  await db.schema.dropTable('route_feed_tasks').execute()
  await db.schema.dropTable('route_feed_routes').execute()
}
