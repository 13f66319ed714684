import type { Kysely } from 'kysely'

// Frozen once landed: lets `GET /carrier/v1/shipments?updated_since=` find where a carrier's feed
// starts without scanning its older rows (the feed itself pages on carrier_hub_id + change_seq).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('shipments_carrier_hub_updated_idx').on('shipments').columns(['carrier_hub_id', 'updated_at']).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('shipments_carrier_hub_updated_idx').execute()
}
