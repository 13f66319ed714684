import { ShipmentIdParams } from '../../schemas/api/shipments.js'
import { IllegalStateError } from '../shared/errors.js'
import { partyCommandResponses, runPartyCommand, type ByParty } from './party-command.js'
import { requireOpen, requireParty, shipmentDeciderOf, type ShipmentEvent, type ShipmentState } from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'

/** Slice "mark a shipment ready": `POST /shipments/{id}/ready`, for either party of it. */

export type MarkReady = { type: 'MarkReady'; data: { ready_at: string } & ByParty }

/**
 * The shipper's `POST /shipments/{id}/ready`: Pending preparation → Ready to ship. Before the
 * carrier uploaded the label (custom integration, Processing) it is a 409; when already ready it
 * appends nothing (a repeated click is harmless).
 */
export function decide(command: MarkReady, state: ShipmentState): ShipmentEvent[] {
  requireParty(state, command.data.organization_id)
  requireOpen(state, 'mark it ready')
  if (state.phase === 'ready_to_ship') return []
  if (state.phase === 'in_carrier_hands') throw new IllegalStateError('The shipment is already in the carrier\'s hands.', 'shipment_in_transit')
  if (state.phase === 'processing') {
    throw new IllegalStateError('The carrier has not uploaded the label yet; the shipment cannot be ready.', 'shipment_not_documented')
  }
  return [{ type: 'ShipmentReady', data: { ready_at: command.data.ready_at } }]
}

export const decider = shipmentDeciderOf(decide)

export const markReadyRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/shipments/:id/ready', {
    schema: {
      tags: ['shipments'],
      summary: 'Mark the shipment ready to ship (Pending preparation → Ready to ship); repeating it is harmless',
      params: ShipmentIdParams,
      response: partyCommandResponses,
    },
  }, async (req) => runPartyCommand(platform, req, req.params.id, decider, (ctx, organizationId): MarkReady => ({
    type: 'MarkReady', data: { ready_at: ctx.now.toISOString(), organization_id: organizationId },
  })))
}
