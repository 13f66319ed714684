import { PublishRatesBody, TariffEnvelope, TariffIdParams } from '../../schemas/api/tariffs.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { ValidationError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { carrierIdOf } from '../http/plugins/auth.js'
import { validateRates, type Rate } from './pricing.js'
import type { Zone } from './zones.js'
import { requireCarrierTariff, tariffDeciderOf, tariffStream, type TariffEvent, type TariffState } from './tariff.js'
import { tariffOf } from './queries.js'
import type { RoutesPlugin } from '../http/module.js'
import { commandContext } from '../http/command-context.js'

/** Slice "publish the rates": the carrier's `PUT /tariffs/{id}/rates`, replacing the last table. */

export type PublishRates = { type: 'PublishRates'; data: { carrier_id: string; zones: Zone[]; rates: Rate[]; now: Date } }

export function decide(command: PublishRates, state: TariffState): TariffEvent[] {
  requireCarrierTariff(state, command.data.carrier_id)
  return [{ type: 'TariffRatesPublished', data: { zones: command.data.zones, rates: command.data.rates, published_at: command.data.now.toISOString() } }]
}

export const decider = tariffDeciderOf(decide)

/** Stored form of a valid zone: trimmed codes, upper-case countries, zipcodes as text. */
function normalizeZone(z: any): Zone {
  const zone: Zone = { code: String(z.code).trim(), name: String(z.name).trim() }
  if (Array.isArray(z.countries)) zone.countries = z.countries.map((c: string) => c.trim().toUpperCase())
  if (Array.isArray(z.states)) zone.states = z.states.map((s: string) => s.trim())
  if (Array.isArray(z.city_ids)) zone.city_ids = z.city_ids
  if (Array.isArray(z.zipcodes)) zone.zipcodes = z.zipcodes.map((r: any) => ({ from: String(r.from).trim(), to: String(r.to).trim() }))
  return zone
}

export const publishRatesRoutes: RoutesPlugin = async (app, { platform }) => {
  app.put('/tariffs/:tariff_id/rates', {
    schema: { tags: ['carrier API'], summary: "Publish the tariff's zones and rates (replaces the previous table)", params: TariffIdParams, body: PublishRatesBody, response: { 200: TariffEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const carrierId = carrierIdOf(req)
    const { tariff_id } = req.params
    const body = req.body
    await tariffOf(platform.rm, carrierId, tariff_id)
    const errors = validateRates(body)
    if (Object.keys(errors).length) throw new ValidationError(errors)
    const zones = body.zones.map(normalizeZone)
    const rates = (body.rates as Rate[]).map((r) => ({ origin_zone: r.origin_zone.trim(), destination_zone: r.destination_zone.trim(), max_grams: r.max_grams, price: r.price, lead_time_days: r.lead_time_days }))
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, tariffStream(tariff_id), decider, { type: 'PublishRates', data: { carrier_id: carrierId, zones, rates, now: ctx.now } }, ctx)
    return { tariff: await tariffOf(platform.rm, carrierId, tariff_id) }
  })
}
