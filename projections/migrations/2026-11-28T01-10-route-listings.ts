import { type Kysely, sql } from 'kysely'

// Frozen once landed. The routes listing flat at a million (issue 32): an index per filter, each
// (organization_id, filter, shift_date, id) so a page newest shift first stops after its rows, and
// the count of each organization's routes per (driver scope, status, shift date), so `meta.total`
// and a deep `page=` are found without scanning. Backfilled from `routes`. Meanings: docs/read-models.md.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('routes_org_status_shift_idx').on('routes').columns(['organization_id', 'status', 'shift_date', 'id']).execute()
  await db.schema.createIndex('routes_org_driver_shift_idx').on('routes').columns(['organization_id', 'driver_id', 'shift_date', 'id'])
    .where(sql.ref('driver_id'), 'is not', null).execute()
  // A driver's routes of one status (the dispatcher's "what is Dana's still to publish") in order too.
  await db.schema.createIndex('routes_org_driver_status_shift_idx').on('routes').columns(['organization_id', 'driver_id', 'status', 'shift_date', 'id'])
    .where(sql.ref('driver_id'), 'is not', null).execute()

  await db.schema.createTable('route_listing_counts')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('driver_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('route_listing_counts_pk', ['org_id', 'driver_id', 'status', 'day'])
    .execute()
  // Counts at zero last within a projection round only: the round deletes them through this.
  await db.schema.createIndex('route_listing_counts_zero_idx').on('route_listing_counts').column('org_id').where(sql.ref('n'), '=', 0).execute()
  // Every route counts in its organization's '' row, and one with a driver in its driver's row too.
  const scopes = db.selectFrom('routes as r')
    .select([sql.ref('r.organization_id').as('org_id'), sql.lit('').as('driver_id'), 'r.status', sql`r.shift_date::date`.as('day')])
    .unionAll(db.selectFrom('routes as r')
      .select([sql.ref('r.organization_id').as('org_id'), 'r.driver_id', 'r.status', sql`r.shift_date::date`.as('day')])
      .where('r.driver_id', 'is not', null))
  await db.insertInto('route_listing_counts').columns(['org_id', 'driver_id', 'status', 'day', 'n'])
    .expression(db.selectFrom(scopes.as('s')).select(['org_id', 'driver_id', 'status', 'day', sql`count(*)`.as('n')])
      .groupBy(['org_id', 'driver_id', 'status', 'day']))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('route_listing_counts').execute()
  await db.schema.dropIndex('routes_org_driver_status_shift_idx').execute()
  await db.schema.dropIndex('routes_org_driver_shift_idx').execute()
  await db.schema.dropIndex('routes_org_status_shift_idx').execute()
}
