import { type Kysely, sql } from 'kysely'

// Frozen once landed. The organization's shipments listing (issue 32): one row per viewing
// organization and shipment (the shipper's, and the carrier's when it is another organization), so
// a listing reads one organization's index range instead of `shipper_id = $1 or carrier_id = $1`,
// and the count of each organization's shipments per status and UTC day of created_at, so
// `meta.total` and a deep `page=` are found without scanning. Backfilled from `shipments`: an
// upgraded database lists correctly before any rebuild. Meanings: docs/read-models.md.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('shipment_listings')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('shipment_id', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('external_reference', 'text')
    .addPrimaryKeyConstraint('shipment_listings_pk', ['org_id', 'shipment_id'])
    .execute()
  await db.schema.createIndex('shipment_listings_org_created_idx').on('shipment_listings')
    .columns(['org_id', 'created_at desc', 'shipment_id desc']).execute()
  await db.schema.createIndex('shipment_listings_org_status_created_idx').on('shipment_listings')
    .columns(['org_id', 'status', 'created_at desc', 'shipment_id desc']).execute()
  await db.schema.createIndex('shipment_listings_org_reference_idx').on('shipment_listings')
    .columns(['org_id', 'external_reference']).where(sql.ref('external_reference'), 'is not', null).execute()

  await db.schema.createTable('shipment_listing_counts')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('shipment_listing_counts_pk', ['org_id', 'status', 'day'])
    .execute()

  const sides = db.selectFrom('shipments')
    .select([sql.ref('shipper_id').as('org_id'), 'id as shipment_id', 'status', 'created_at', 'external_reference'])
    .unionAll(db.selectFrom('shipments')
      .select([sql.ref('carrier_id').as('org_id'), 'id as shipment_id', 'status', 'created_at', 'external_reference'])
      .whereRef('carrier_id', '<>', 'shipper_id'))
  await db.insertInto('shipment_listings')
    .columns(['org_id', 'shipment_id', 'status', 'created_at', 'external_reference'])
    .expression(db.selectFrom(sides.as('s')).selectAll())
    .execute()
  const day = sql`(${sql.ref('created_at')} at time zone 'UTC')::date`
  await db.insertInto('shipment_listing_counts')
    .columns(['org_id', 'status', 'day', 'n'])
    .expression(db.selectFrom('shipment_listings')
      .select(['org_id', 'status', day.as('day'), sql`count(*)`.as('n')])
      .groupBy(['org_id', 'status', day]))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('shipment_listing_counts').execute()
  await db.schema.dropTable('shipment_listings').execute()
}
