import { CreateTariffBody, TariffEnvelope } from '../../schemas/api/tariffs.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { normalizeCurrency } from '../shared/currency.js'
import { handleCommand } from '../shared/command-handler.js'
import { carrierIdOf } from '../http/plugins/auth.js'
import { ensureServiceType } from '../carriers/add-service-type.js'
import { DEFAULT_VOLUMETRIC_DIVISOR } from './pricing.js'
import { tariffDeciderOf, tariffStream, type TariffEvent, type TariffState } from './tariff.js'
import { tariffOf } from './queries.js'
import type { RoutesPlugin } from '../http/module.js'
import { commandContext } from '../http/command-context.js'

/** Slice "create a tariff": the carrier's `POST /tariffs`. */

export type CreateTariff = { type: 'CreateTariff'; data: { id: string; carrier_id: string; name: string; currency: string; service_type_id: number; volumetric_divisor: number; now: Date } }

export function decide(command: CreateTariff, state: TariffState): TariffEvent[] {
  if (state.exists) throw new IllegalStateError('The tariff already exists.', 'tariff_exists')
  const { now, ...d } = command.data
  return [{ type: 'TariffCreated', data: { ...d, created_at: now.toISOString() } }]
}

export const decider = tariffDeciderOf(decide)

export const createTariffRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tariffs', {
    schema: { tags: ['carrier API'], summary: 'Create a tariff for a service type (created if new)', body: CreateTariffBody, response: { 201: TariffEnvelope, ...errorResponses } },
  }, async (req, reply) => {
    const carrierId = carrierIdOf(req)
    const body = req.body
    const errors = new ErrorBag()
    const currency = normalizeCurrency(body.currency)
    if (!currency) errors.add('currency', 'The currency must be an ISO 4217 code.')
    errors.throwIfAny()
    const ctx = commandContext(platform, req)
    const serviceType = await ensureServiceType(platform, carrierId, body.service_type.code, body.service_type.name, ctx)
    const id = publicId('trf')
    await handleCommand(platform.commands, tariffStream(id), decider, {
      type: 'CreateTariff',
      data: { id, carrier_id: carrierId, name: body.name.trim(), currency: currency!, service_type_id: serviceType.id, volumetric_divisor: body.volumetric_divisor ?? DEFAULT_VOLUMETRIC_DIVISOR, now: ctx.now },
    }, ctx)
    return reply.code(201).send({ tariff: await tariffOf(platform.rm, carrierId, id) })
  })
}
