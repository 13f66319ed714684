import type { FastifyRequest } from 'fastify'
import { ShipmentEnvelope } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { handleCommand } from '../shared/command-handler.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { commandContext } from '../http/command-context.js'
import { findShipmentViewWithCatalog, toShipment } from './queries.js'
import { trackingLinks } from './tracking-link.js'
import { shipmentStream, type ShipmentEvent, type ShipmentState } from './shipment.js'

/** Responses of the routes API's shipment commands: the shipment as the caller now sees it. */
export const partyCommandResponses = { 200: ShipmentEnvelope, 404: ErrorResponse, ...errorResponses }

/** What a routes-API shipment command carries: the calling organization, checked by the decider. */
export interface ByParty { organization_id?: string | undefined }

/**
 * Run a shipper's or carrier's command on the shipment, then answer with the shipment in the
 * caller's status catalog. The decider checks that the caller is a party of it (shipment.ts
 * requireParty), so the request reads the stream once and the read model once; handleCommand
 * waits for the projection, so that read shows the write.
 */
export async function runPartyCommand<Command>(
  platform: Platform, req: FastifyRequest, id: number, decider: Decider<ShipmentState, Command, ShipmentEvent>,
  command: (ctx: ReturnType<typeof commandContext>, organizationId: string) => Command,
) {
  const org = organizationOf(req)
  const ctx = commandContext(platform, req)
  await handleCommand(platform.commands, shipmentStream(id), decider, command(ctx, org.id), ctx)
  const found = await findShipmentViewWithCatalog(platform.rm, org.id, id)
  if (!found) throw new NotFoundError('Shipment')
  return { success: true, shipment: toShipment(found.view, found.overrides, trackingLinks(req, platform)) }
}
