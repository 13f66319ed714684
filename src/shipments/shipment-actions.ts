import type { FastifyInstance } from 'fastify'
import { CancelShipmentBody, ShipmentEnvelope, ShipmentIdParams } from '../../schemas/api/shipments.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { handleCommand } from '../shared/command-handler.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { commandContext } from './create-shipment.js'
import { requireVisibleShipment } from './read-shipments.js'
import { findShipmentView, statusOverrides, toShipment } from './queries.js'
import { shipmentDecider, shipmentStream, type ShipmentCommand } from './shipment.js'

/**
 * `POST /shipments/{id}/cancel` and `POST /shipments/{id}/ready`, for either party of the
 * shipment. The rules are the decider's (src/shipments/shipment.ts): cancel until the carrier
 * has the parcel, ready from Pending preparation; a broken rule is a 409 with a clear message.
 */
export async function shipmentActionRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  const respond = async (orgId: string, id: number) => {
    const [view, overrides] = await Promise.all([findShipmentView(platform, orgId, id), statusOverrides(platform, orgId)])
    if (!view) throw new NotFoundError('Shipment')
    return { success: true, shipment: toShipment(view, overrides) }
  }

  app.post('/shipments/:id/cancel', {
    schema: {
      tags: ['shipments'],
      summary: 'Cancel a shipment not yet in the carrier\'s hands (409 once picked up, final or cancelled)',
      params: ShipmentIdParams, body: CancelShipmentBody,
      response: { 200: ShipmentEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params as { id: number }
    await requireVisibleShipment(platform, org.id, id)
    const ctx = commandContext(platform, req)
    const reason = (req.body as { reason?: string | null } | null)?.reason ?? null
    const command: ShipmentCommand = { type: 'CancelShipment', data: { cancelled_at: ctx.now.toISOString(), reason: reason?.trim() || null } }
    await handleCommand(platform.commands, shipmentStream(id), shipmentDecider, command, ctx)
    return respond(org.id, id)
  })

  app.post('/shipments/:id/ready', {
    schema: {
      tags: ['shipments'],
      summary: 'Mark the shipment ready to ship (Pending preparation → Ready to ship); repeating it is harmless',
      params: ShipmentIdParams,
      response: { 200: ShipmentEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params as { id: number }
    await requireVisibleShipment(platform, org.id, id)
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, shipmentStream(id), shipmentDecider, { type: 'MarkReady', data: { ready_at: ctx.now.toISOString() } }, ctx)
    return respond(org.id, id)
  })
}
