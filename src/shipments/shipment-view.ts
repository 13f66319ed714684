import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { NotFoundError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { addressRow, foldShipmentEvents, packageRows } from '../../projections/shipments/shipments-projection.js'
import { findShipmentRow, type FoldedShipmentView } from './queries.js'
import { ShipmentEvents } from '../../schemas/events/shipments.js'
import { isEvent } from '../../schemas/events/event-map.js'

// One shipment as several slices need it: its view folded from its events (the create's answer,
// time travel) and the caller's right to see it.

/** The read-model view of one shipment computed from its events by the projector's own fold. */
export function viewFromEvents(events: RecordedEvent[], id: number): FoldedShipmentView | undefined {
  const created = events.find((e) => isEvent(ShipmentEvents, 'ShipmentCreated', e))
  if (!isEvent(ShipmentEvents, 'ShipmentCreated', created)) return undefined
  const d = created.data
  const row = foldShipmentEvents(events).rows.get(id)
  if (!row) return undefined
  return {
    ...row,
    origin: addressRow(d.origin, d.created_at),
    destination: addressRow(d.destination, d.created_at),
    packages: packageRows(d),
  }
}

/** Visible to the caller (shipper or carrier of it), else 404: other tenants never learn it exists. */
export async function requireVisibleShipment(platform: Platform, orgId: string, id: number) {
  const row = await findShipmentRow(platform.rm, orgId, id)
  if (!row) throw new NotFoundError('Shipment')
  return row
}
