import type { FastifyInstance } from 'fastify'
import { CreateTariffBody, PublishRatesBody, TariffEnvelope, TariffIdParams, TariffList, type CreateTariffBody as Body } from '../../schemas/api/tariffs.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, ValidationError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { normalizeCurrency } from '../shared/currency.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { actorOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { ensureServiceType } from '../carriers/add-service-type.js'
import { DEFAULT_VOLUMETRIC_DIVISOR, validateRates, type Rate } from './pricing.js'
import type { Zone } from './zones.js'
import { tariffStream } from './tariff.js'
import { decider } from './tariff-commands.js'
import { tariffOf, tariffsOf } from './queries.js'

const ctxOf = (platform: Platform, req: Parameters<typeof actorOf>[0]): CommandContext => ({ now: platform.clock(), actor: actorOf(req), requestId: req.id })

/** Stored form of a valid zone: trimmed codes, upper-case countries, zipcodes as text. */
function normalizeZone(z: any): Zone {
  const zone: Zone = { code: String(z.code).trim(), name: String(z.name).trim() }
  if (Array.isArray(z.countries)) zone.countries = z.countries.map((c: string) => c.trim().toUpperCase())
  if (Array.isArray(z.states)) zone.states = z.states.map((s: string) => s.trim())
  if (Array.isArray(z.city_ids)) zone.city_ids = z.city_ids
  if (Array.isArray(z.zipcodes)) zone.zipcodes = z.zipcodes.map((r: any) => ({ from: String(r.from).trim(), to: String(r.to).trim() }))
  return zone
}

/** Carrier API: tariffs of the calling carrier. */
export async function tariffRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  app.post('/tariffs', {
    schema: { tags: ['carrier API'], summary: 'Create a tariff for a service type (created if new)', body: CreateTariffBody, response: { 201: TariffEnvelope, ...errorResponses } },
  }, async (req, reply) => {
    const carrierId = req.principal!.carrierId!
    const body = req.body as Body
    const errors = new ErrorBag()
    const currency = normalizeCurrency(body.currency)
    if (!currency) errors.add('currency', 'The currency must be an ISO 4217 code.')
    errors.throwIfAny()
    const ctx = ctxOf(platform, req)
    const serviceType = await ensureServiceType(platform, carrierId, body.service_type.code, body.service_type.name, ctx)
    const id = publicId('trf')
    await handleCommand(platform.commands, tariffStream(id), decider, {
      type: 'CreateTariff',
      data: { id, carrier_id: carrierId, name: body.name.trim(), currency: currency!, service_type_id: serviceType.id, volumetric_divisor: body.volumetric_divisor ?? DEFAULT_VOLUMETRIC_DIVISOR, now: ctx.now },
    }, ctx)
    return reply.code(201).send({ tariff: await tariffOf(platform, carrierId, id) })
  })

  app.put('/tariffs/:tariff_id/rates', {
    schema: { tags: ['carrier API'], summary: "Publish the tariff's zones and rates (replaces the previous table)", params: TariffIdParams, body: PublishRatesBody, response: { 200: TariffEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const carrierId = req.principal!.carrierId!
    const { tariff_id } = req.params as { tariff_id: string }
    const body = req.body as { zones: unknown[]; rates: unknown[] }
    await tariffOf(platform, carrierId, tariff_id)
    const errors = validateRates(body)
    if (Object.keys(errors).length) throw new ValidationError(errors)
    const zones = body.zones.map(normalizeZone)
    const rates = (body.rates as Rate[]).map((r) => ({ origin_zone: r.origin_zone.trim(), destination_zone: r.destination_zone.trim(), max_grams: r.max_grams, price: r.price, lead_time_days: r.lead_time_days }))
    await handleCommand(platform.commands, tariffStream(tariff_id), decider, { type: 'PublishRates', data: { carrier_id: carrierId, zones, rates, now: platform.clock() } }, ctxOf(platform, req))
    return { tariff: await tariffOf(platform, carrierId, tariff_id) }
  })

  app.post('/tariffs/:tariff_id/activate', {
    schema: { tags: ['carrier API'], summary: 'Make this the active tariff of its service type (needs published rates)', params: TariffIdParams, response: { 200: TariffEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const carrierId = req.principal!.carrierId!
    const { tariff_id } = req.params as { tariff_id: string }
    await handleCommand(platform.commands, tariffStream(tariff_id), decider, { type: 'ActivateTariff', data: { carrier_id: carrierId, now: platform.clock() } }, ctxOf(platform, req))
    return { tariff: await tariffOf(platform, carrierId, tariff_id) }
  })

  app.get('/tariffs', {
    schema: { tags: ['carrier API'], summary: "The carrier's tariffs", response: { 200: TariffList, 401: ErrorResponse } },
  }, async (req) => ({ tariffs: await tariffsOf(platform, req.principal!.carrierId!) }))

  app.get('/tariffs/:tariff_id', {
    schema: { tags: ['carrier API'], summary: 'One tariff', params: TariffIdParams, response: { 200: TariffEnvelope, 404: ErrorResponse, 401: ErrorResponse } },
  }, async (req) => ({ tariff: await tariffOf(platform, req.principal!.carrierId!, (req.params as { tariff_id: string }).tariff_id) }))
}
