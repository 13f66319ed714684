import { CarrierShipmentParams, SetTrackingBody } from '../../schemas/api/carriers.js'
import { ErrorBag } from '../shared/errors.js'
import { carrierCommandResponses, runCarrierCommand, type ByCarrier } from './carrier-command.js'
import { annulled, requireCarrierShipment, requireOpen, shipmentDeciderOf, type ShipmentEvent, type ShipmentState } from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'
import { carrierIdOf } from '../http/plugins/auth.js'

/** Slice "set the tracking number": the carrier's `PUT /shipments/{id}/tracking`. */

export type SetTracking = { type: 'SetTracking'; data: { tracking_number: string; tracking_url?: string | null; set_at: string } & ByCarrier }

/** Sets or changes the tracking number; the same number and URL again appends nothing. Refused once annulled. */
export function decide(command: SetTracking, state: ShipmentState): ShipmentEvent[] {
  requireCarrierShipment(state, command.data.carrier_id)
  if (annulled(state)) requireOpen(state, 'set its tracking')
  const number = command.data.tracking_number.trim()
  const url = command.data.tracking_url ?? null
  const bag = new ErrorBag()
  if (!number) bag.add('tracking_number', 'The tracking number is required.')
  if (number.length > 100) bag.add('tracking_number', 'The tracking number may not be greater than 100 characters.')
  if (url !== null && url.length > 2048) bag.add('tracking_url', 'The tracking url may not be greater than 2048 characters.')
  bag.throwIfAny()
  if (state.tracking && state.tracking.number === number && state.tracking.url === url) return []
  return [{ type: 'TrackingNumberSet', data: { tracking_number: number, tracking_url: url, set_at: command.data.set_at } }]
}

export const decider = shipmentDeciderOf(decide)

export const setTrackingRoutes: RoutesPlugin = async (app, { platform }) => {
  app.put('/shipments/:shipment_id/tracking', {
    schema: { tags: ['carrier API'], summary: 'Set the tracking number and optional public tracking URL', params: CarrierShipmentParams, body: SetTrackingBody, response: carrierCommandResponses },
  }, async (req) => {
    const body = req.body
    return runCarrierCommand(platform, req, req.params.shipment_id, decider, {
      type: 'SetTracking',
      data: { tracking_number: body.tracking_number, tracking_url: body.tracking_url ?? null, set_at: platform.clock().toISOString(), carrier_id: carrierIdOf(req) },
    })
  })
}
