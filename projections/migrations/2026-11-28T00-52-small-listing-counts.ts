import { type Kysely, sql } from 'kysely'

// Frozen once landed. The organization's small listings flat (issue 32): users, vehicles, blueprints
// and webhooks keep the count of each organization's rows per filter value the API offers, written by
// their projections, so `meta.total` reads one or a few rows instead of count(*); and an index per
// filter in the listings' order (created_at, id), so a page stops early and `links.next` seeks.
// Backfilled from the tables: an upgraded database counts correctly before any rebuild.
// Meanings: docs/read-models.md.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('user_listing_counts')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_listing_counts_pk', ['organization_id', 'role', 'status'])
    .execute()
  await db.schema.createTable('vehicle_listing_counts')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createTable('webhook_listing_counts')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .execute()
  await db.schema.createTable('blueprint_listing_counts')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('blueprint_listing_counts_pk', ['organization_id', 'status'])
    .execute()

  // (organization_id, created_at, id) exists for each table; these serve the filters.
  await db.schema.createIndex('users_organization_role_idx').on('users').columns(['organization_id', 'role', 'created_at', 'id']).execute()
  await db.schema.createIndex('users_organization_status_idx').on('users').columns(['organization_id', 'status', 'created_at', 'id']).execute()
  await db.schema.createIndex('users_organization_role_status_idx').on('users').columns(['organization_id', 'role', 'status', 'created_at', 'id']).execute()
  await db.schema.createIndex('blueprints_organization_status_idx').on('blueprints').columns(['organization_id', 'status', 'created_at', 'id']).execute()
  // The listing shows live webhooks only: deleted ones are not walked over.
  await db.schema.createIndex('webhooks_live_organization_idx').on('webhooks').columns(['organization_id', 'created_at', 'id'])
    .where(sql.ref('deleted_at'), 'is', null).execute()

  const n = sql`count(*)`.as('n')
  await db.insertInto('user_listing_counts').columns(['organization_id', 'role', 'status', 'n'])
    .expression(db.selectFrom('users').select(['organization_id', 'role', 'status', n]).groupBy(['organization_id', 'role', 'status'])).execute()
  await db.insertInto('vehicle_listing_counts').columns(['organization_id', 'n'])
    .expression(db.selectFrom('vehicles').select(['organization_id', n]).groupBy('organization_id')).execute()
  await db.insertInto('webhook_listing_counts').columns(['organization_id', 'n'])
    .expression(db.selectFrom('webhooks').select(['organization_id', n]).where('deleted_at', 'is', null).groupBy('organization_id')).execute()
  await db.insertInto('blueprint_listing_counts').columns(['organization_id', 'status', 'n'])
    .expression(db.selectFrom('blueprints').select(['organization_id', 'status', n]).groupBy(['organization_id', 'status'])).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of ['users_organization_role_idx', 'users_organization_status_idx', 'users_organization_role_status_idx', 'blueprints_organization_status_idx', 'webhooks_live_organization_idx']) {
    await db.schema.dropIndex(index).execute()
  }
  for (const table of ['blueprint_listing_counts', 'webhook_listing_counts', 'vehicle_listing_counts', 'user_listing_counts']) {
    await db.schema.dropTable(table).execute()
  }
}
