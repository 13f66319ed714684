import { type Kysely, sql } from 'kysely'

// Frozen once landed. The workflows listing flat at a million (issue 32): an index per filter, each
// (organization_id, filter, created_at, id) so a page oldest first stops after its rows, and the
// count of each organization's workflows per (blueprint scope, status, UTC day of created_at), so
// `meta.total` and a deep `page=` are found without scanning. Backfilled from `workflows`.
// Meanings: docs/read-models.md.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('workflows_org_status_created_idx').on('workflows').columns(['organization_id', 'status', 'created_at', 'id']).execute()
  await db.schema.createIndex('workflows_org_blueprint_created_idx').on('workflows').columns(['organization_id', 'blueprint_key', 'created_at', 'id']).execute()
  await db.schema.createIndex('workflows_org_shipment_created_idx').on('workflows').columns(['organization_id', 'shipment_id', 'created_at', 'id'])
    .where(sql.ref('shipment_id'), 'is not', null).execute()
  // Superseded by the one before (only the listing filters by shipment, always within an organization).
  await db.schema.dropIndex('workflows_shipment_idx').execute()

  await db.schema.createTable('workflow_listing_counts')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('blueprint_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('n', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('workflow_listing_counts_pk', ['org_id', 'blueprint_key', 'status', 'day'])
    .execute()
  // Counts at zero last within a projection round only: the round deletes them through this.
  await db.schema.createIndex('workflow_listing_counts_zero_idx').on('workflow_listing_counts').column('org_id').where(sql.ref('n'), '=', 0).execute()
  // Every workflow counts in its organization's '' row and in its blueprint's row.
  const day = sql`(w.created_at at time zone 'UTC')::date`
  const scopes = db.selectFrom('workflows as w')
    .select([sql.ref('w.organization_id').as('org_id'), sql.lit('').as('blueprint_key'), 'w.status', day.as('day')])
    .unionAll(db.selectFrom('workflows as w').select([sql.ref('w.organization_id').as('org_id'), 'w.blueprint_key', 'w.status', day.as('day')]))
  await db.insertInto('workflow_listing_counts').columns(['org_id', 'blueprint_key', 'status', 'day', 'n'])
    .expression(db.selectFrom(scopes.as('s')).select(['org_id', 'blueprint_key', 'status', 'day', sql`count(*)`.as('n')])
      .groupBy(['org_id', 'blueprint_key', 'status', 'day']))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('workflow_listing_counts').execute()
  await db.schema.createIndex('workflows_shipment_idx').on('workflows').columns(['shipment_id']).execute()
  for (const c of ['status', 'blueprint', 'shipment']) await db.schema.dropIndex(`workflows_org_${c}_created_idx`).execute()
}
