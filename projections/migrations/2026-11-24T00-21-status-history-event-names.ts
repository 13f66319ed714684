import type { Kysely } from 'kysely'

// Frozen once landed. Two shipment events took the design card's names (schemas/events/upcasters.ts):
// the projector now writes the new names into shipment_status_history.event_type, and a rebuild
// writes them for the old events too; this gives rows projected before the rename the same names,
// so the analysts' table never holds both.
const RENAMED: [string, string][] = [
  ['ShipmentDocumented', 'LabelUploaded'],
  ['CarrierStatusReported', 'StatusReported'],
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const [old, current] of RENAMED) {
    await db.updateTable('shipment_status_history').set({ event_type: current }).where('event_type', '=', old).execute()
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [old, current] of RENAMED) {
    await db.updateTable('shipment_status_history').set({ event_type: old }).where('event_type', '=', current).execute()
  }
}
