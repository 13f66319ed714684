import { CancelShipmentBody, ShipmentIdParams } from '../../schemas/api/shipments.js'
import { IllegalStateError } from '../shared/errors.js'
import { partyCommandResponses, runPartyCommand, type ByParty } from './party-command.js'
import { requireOpen, requireParty, shipmentDeciderOf, type ShipmentEvent, type ShipmentState } from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'

/**
 * Slice "cancel a shipment": `POST /shipments/{id}/cancel`, for either party of it. Cancel until
 * the carrier has the parcel (the rule is in shipment.ts's header); a broken rule is a 409.
 */

export type CancelShipment = { type: 'CancelShipment'; data: { cancelled_at: string; reason?: string | null } & ByParty }

export function decide(command: CancelShipment, state: ShipmentState): ShipmentEvent[] {
  requireParty(state, command.data.organization_id)
  requireOpen(state, 'cancel it')
  if (state.phase === 'in_carrier_hands') {
    throw new IllegalStateError('The shipment is already in the carrier\'s hands and can no longer be cancelled.', 'shipment_in_transit')
  }
  return [{ type: 'ShipmentCancelled', data: { cancelled_at: command.data.cancelled_at, reason: command.data.reason ?? null } }]
}

export const decider = shipmentDeciderOf(decide)

export const cancelShipmentRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/shipments/:id/cancel', {
    schema: {
      tags: ['shipments'],
      summary: 'Cancel a shipment not yet in the carrier\'s hands (409 once picked up, final or cancelled)',
      params: ShipmentIdParams, body: CancelShipmentBody,
      response: partyCommandResponses,
    },
  }, async (req) => {
    const reason = req.body?.reason ?? null
    return runPartyCommand(platform, req, req.params.id, decider, (ctx, organizationId): CancelShipment => ({
      type: 'CancelShipment', data: { cancelled_at: ctx.now.toISOString(), reason: reason?.trim() || null, organization_id: organizationId },
    }))
  })
}
