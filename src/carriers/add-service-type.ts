import { CarrierIdParams, CreateServiceTypeBody, ServiceType } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { Type } from 'typebox'
import type { Decider } from '../shared/decider.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { carrierStream, evolve, initialState, type CarrierEvent, type CarrierState } from './carrier.js'
import { requireCarriersEnabled } from './carriers-enabled.js'
import { nextServiceTypeIds } from './service-type-ids.js'
import { ownedCarrier } from './queries.js'

export interface AddServiceType {
  type: 'AddServiceType'
  data: { id: number; code: string; name: string; now: Date }
}

/** A code already offered is kept as it is (adding it again is a no-op), so tariffs can name one by code. */
export function decide(command: AddServiceType, state: CarrierState): CarrierEvent[] {
  if (!state.exists) throw new NotFoundError('Carrier')
  if (state.serviceTypes.has(command.data.code)) return []
  const d = command.data
  return [{ type: 'ServiceTypeAdded', data: { id: d.id, code: d.code, name: d.name.trim(), added_at: d.now.toISOString() } }]
}

export const decider: Decider<CarrierState, AddServiceType, CarrierEvent> = { decide, evolve, initialState }

/** The service type with this code, created if the carrier does not offer it yet. */
export async function ensureServiceType(platform: Platform, carrierId: string, code: string, name: string, ctx: CommandContext): Promise<ServiceType> {
  const existing = await platform.rm.selectFrom('service_types').select(['id', 'code', 'name']).where('carrier_id', '=', carrierId).where('code', '=', code).executeTakeFirst()
  if (existing) return { id: Number(existing.id), code: existing.code, name: existing.name }
  const [id] = await nextServiceTypeIds(platform, 1)
  const result = await handleCommand(platform.commands, carrierStream(carrierId), decider, { type: 'AddServiceType', data: { id: id!, code, name, now: ctx.now } }, ctx)
  return { id: result.state.serviceTypes.get(code)!, code, name: name.trim() }
}

export const serviceTypeRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/carriers/:id/service-types', {
    schema: {
      tags: ['carrier hub'], summary: 'Offer a service type (idempotent by code)', params: CarrierIdParams, body: CreateServiceTypeBody,
      response: { 201: Type.Object({ service_type: ServiceType }), 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    requireCarriersEnabled(org)
    const { id } = req.params
    await ownedCarrier(platform.rm, org.id, id)
    const { code, name } = req.body
    const serviceType = await ensureServiceType(platform, id, code, name, commandContext(platform, req))
    return reply.code(201).send({ service_type: serviceType })
  })
}
