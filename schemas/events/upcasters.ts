import { upcasterFrom } from '../../src/infrastructure/event-store/upcasting.js'

/**
 * How stored events become the current ones on read, without rewriting the log:
 * - `renames`: old type name → current name (the store's `type` column keeps the name an event
 *   was written under; everything above the store sees the current one);
 * - `steps`: per current type, the steps from schema version v to v + 1. Empty while every
 *   payload is at v1; an entry here is how a payload change ships.
 */
export const eventRenames: Readonly<Record<string, string>> = {
  // The names of the owner's design card (issue 16): the carrier's label upload and its status reports.
  ShipmentDocumented: 'LabelUploaded',
  CarrierStatusReported: 'StatusReported',
}

export const upcasters = upcasterFrom({ renames: eventRenames, steps: {} })
