import { shipmentDeciderOf, type ShipmentEvent, type ShipmentState } from './shipment.js'

/** Slice "expire a shipment": sent by the expiry process (src/processes/shipment-expiry.ts), no route. */

export type ExpireShipment = { type: 'ExpireShipment'; data: { now: string; expiry_hours: number } }

/**
 * Timer-driven (the process manager may fire late or twice): expires a shipment that is still
 * open and not ready `expiry_hours` after creation; in every other case it appends nothing.
 */
export function decide(command: ExpireShipment, state: ShipmentState): ShipmentEvent[] {
  if (!state.exists || state.outcome || !state.createdAt) return []
  if (state.phase !== 'processing' && state.phase !== 'pending_preparation') return []
  const deadline = Date.parse(state.createdAt) + command.data.expiry_hours * 3_600_000
  if (Date.parse(command.data.now) < deadline) return []
  return [{ type: 'ShipmentExpired', data: { expired_at: command.data.now } }]
}

export const decider = shipmentDeciderOf(decide)
