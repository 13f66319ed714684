import { type Kysely, sql } from 'kysely'

// Frozen once landed. `GET /carrier/v1/shipments?updated_since=` must start at the lowest change
// sequence of any row updated since then; `updated_at` is the command's clock, not commit order,
// so the earliest of them by (carrier_hub_id, updated_at) is not that row (issue 15). A watermark
// that never decreases along change_seq (the latest updated_at of any change so far) finds it by
// one seek on (carrier_hub_id, feed_watermark, change_seq); that index replaces the one on updated_at.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('shipments').addColumn('feed_watermark', 'timestamptz').execute()
  await db.updateTable('shipments')
    .from(db.selectFrom('shipments').select(['id', sql`max(updated_at) over (order by change_seq)`.as('high')]).as('w'))
    .set((eb) => ({ feed_watermark: eb.ref('w.high') }))
    .whereRef('shipments.id', '=', 'w.id')
    .execute()
  await db.schema.alterTable('shipments').alterColumn('feed_watermark', (c) => c.setNotNull()).execute()
  await db.schema.createIndex('shipments_carrier_hub_feed_idx').on('shipments').columns(['carrier_hub_id', 'feed_watermark', 'change_seq']).execute()
  await db.schema.dropIndex('shipments_carrier_hub_updated_idx').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('shipments_carrier_hub_updated_idx').on('shipments').columns(['carrier_hub_id', 'updated_at']).execute()
  await db.schema.dropIndex('shipments_carrier_hub_feed_idx').execute()
  await db.schema.alterTable('shipments').dropColumn('feed_watermark').execute()
}
