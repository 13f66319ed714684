import { type Kysely, sql } from 'kysely'

// Frozen once landed. The contracts listing flat (issue 32): one row per organization and active
// contract, seen from that organization's side (`license`: the other party's role), with the other
// party's name and market copied on it, so each of the listing's four orders is one index range of
// the organization; and the count of those rows per organization and side, kept by the projection,
// so `meta.total` reads one row. Organizations cannot be renamed nor change market (no such event),
// so the copies stay true. Backfilled from contracts and organizations. Meanings: docs/read-models.md.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('contract_listings')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('license', 'text', (c) => c.notNull())
    .addColumn('counterpart_id', 'text', (c) => c.notNull())
    .addColumn('contract_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    // `markets.name` sorts organizations without a market last, whichever the direction: a flag
    // first (false, then true) and a market never null ('' when none) keep every key non-null.
    .addColumn('no_market', 'boolean', (c) => c.notNull())
    .addColumn('market_sort', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contract_listings_pk', ['organization_id', 'license', 'counterpart_id'])
    .execute()
  await db.schema.createTable('contract_listing_counts')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('license', 'text', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('contract_listing_counts_pk', ['organization_id', 'license'])
    .execute()

  // One index per order, in that order's directions (the id breaks ties ascending in every one).
  const scope = ['organization_id', 'license']
  await db.schema.createIndex('contract_listings_name_idx').on('contract_listings').columns([...scope, 'name', 'counterpart_id']).execute()
  await db.schema.createIndex('contract_listings_name_desc_idx').on('contract_listings').columns([...scope, 'name desc', 'counterpart_id']).execute()
  await db.schema.createIndex('contract_listings_market_idx').on('contract_listings').columns([...scope, 'no_market', 'market_sort', 'name', 'counterpart_id']).execute()
  await db.schema.createIndex('contract_listings_market_desc_idx').on('contract_listings').columns([...scope, 'no_market', 'market_sort desc', 'name', 'counterpart_id']).execute()

  // Each contract lists the shipper to the carrier (`license` shipper) and the carrier to the shipper.
  const side = (organization: 'carrier_id' | 'shipper_id', counterpart: 'carrier_id' | 'shipper_id', license: string) =>
    db.selectFrom('contracts as c').innerJoin('organizations as o', 'o.id', `c.${counterpart}`).where('c.status', '=', 'active')
      .select([sql.ref(`c.${organization}`).as('organization_id'), sql.lit(license).as('license'), sql.ref('o.id').as('counterpart_id'), sql.ref('c.id').as('contract_id'),
        sql.ref('o.name').as('name'), sql`o.market is null`.as('no_market'), sql`coalesce(o.market, '')`.as('market_sort')])
  await db.insertInto('contract_listings').columns(['organization_id', 'license', 'counterpart_id', 'contract_id', 'name', 'no_market', 'market_sort'])
    .expression(side('carrier_id', 'shipper_id', 'shipper').unionAll(side('shipper_id', 'carrier_id', 'carrier')))
    .onConflict((oc) => oc.doNothing()).execute()
  await db.insertInto('contract_listing_counts').columns(['organization_id', 'license', 'n'])
    .expression(db.selectFrom('contract_listings').select(['organization_id', 'license', sql`count(*)`.as('n')]).groupBy(['organization_id', 'license']))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contract_listing_counts').execute()
  await db.schema.dropTable('contract_listings').execute()
}
