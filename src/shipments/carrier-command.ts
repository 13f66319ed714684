import type { FastifyRequest } from 'fastify'
import { CarrierShipmentEnvelope } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { handleCommand } from '../shared/command-handler.js'
import { carrierIdOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { Platform } from '../platform.js'
import { carrierShipment } from './carrier-shipments.js'
import { trackingLinks } from './tracking-link.js'
import { shipmentStream, type ShipmentEvent, type ShipmentState } from './shipment.js'

/** Responses of the carrier API's shipment commands: the shipment as the carrier now sees it. */
export const carrierCommandResponses = { 200: CarrierShipmentEnvelope, 404: ErrorResponse, ...errorResponses }

/** What every carrier-API shipment command carries: the calling carrier, checked by the decider. */
export interface ByCarrier { carrier_id?: string | undefined }

/**
 * Run a carrier's command on the shipment, then answer with its carrier view. The decider checks
 * that the shipment is the caller's (src/shipments/shipment.ts requireCarrierShipment), so the
 * request reads the stream once and the read model once; handleCommand waits for the projection,
 * so that read shows the write.
 */
export async function runCarrierCommand<Command>(
  platform: Platform, req: FastifyRequest, id: number, decider: Decider<ShipmentState, Command, ShipmentEvent>, command: Command,
) {
  await handleCommand(platform.commands, shipmentStream(id), decider, command, commandContext(platform, req))
  return { success: true, shipment: await carrierShipment(platform, carrierIdOf(req), id, trackingLinks(req, platform)) }
}
