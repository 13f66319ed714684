import type { Kysely } from 'kysely'

// Frozen once landed. A `delivered` set by the routes operations of a `service_routes` carrier
// (DESIGN §3.9) carries who signed for the parcel; the tracking history shows it beside the status.
// Null on every other row, including all rows projected before.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('shipment_status_history').addColumn('signed_by', 'text').execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('shipment_status_history').dropColumn('signed_by').execute()
}
