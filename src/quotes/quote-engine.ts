import type { Quote } from '../../schemas/api/quotes.js'
import type { Platform } from '../platform.js'
import { chargeableGrams, priceFor, type PackageMeasures } from '../tariffs/pricing.js'
import { zoneMatcher } from '../tariffs/zones.js'
import { activeTariffs, type ActiveTariff } from '../tariffs/queries.js'
import type { OfferedServiceType } from '../carriers/availability.js'
import { askCarrierForQuote } from './quote-callback.js'
import type { QuoteAddress } from './quote-inputs.js'

export interface QuoteRequest {
  origin: QuoteAddress
  destination: QuoteAddress
  packages: PackageMeasures[]
  declared_value: number | null
}

/** A quote with how it was made: what a shipment stores in `custom_data.quote`. */
export interface PricedQuote extends Quote {
  source: 'api' | 'tariff'
  carrier_id: string
  tariff_id: string | null
  origin_zone: string | null
  destination_zone: string | null
  chargeable_grams: number | null
  quoted_at: string
}

interface TariffPrice {
  price: number
  currency: string
  days: number
  tariffId: string
  originZone: string
  destinationZone: string
  grams: number
}

/** The active tariff's price: zones of both ends, chargeable weight, smallest bracket holding it. */
export function tariffPrice(tariff: ActiveTariff | undefined, req: QuoteRequest): TariffPrice | undefined {
  if (!tariff) return undefined
  const match = zoneMatcher(tariff.zones)
  const originZone = match(req.origin.location)
  const destinationZone = match(req.destination.location)
  if (!originZone || !destinationZone) return undefined
  const grams = chargeableGrams(req.packages, tariff.volumetricDivisor)
  const rate = priceFor(tariff.rates, originZone, destinationZone, grams)
  if (!rate) return undefined
  return { price: rate.price, currency: tariff.currency, days: rate.lead_time_days, tariffId: tariff.id, originZone, destinationZone, grams }
}

/**
 * One quote per service type that can be priced (DESIGN §3.5): the carrier's callback when its
 * quote mode is `api` and it answers in time, else its active tariff; none when neither.
 * Every callback runs at once against one deadline, so the whole call takes about one callback
 * time-out at most, however many carriers hang.
 */
export async function quoteServiceTypes(
  platform: Platform, offered: OfferedServiceType[], req: QuoteRequest,
  /** `performance.now()` instant by which callbacks must have answered; default: QUOTE_TIMEOUT_MS from now. */
  deadline: number = performance.now() + platform.config.quoteTimeoutMs,
): Promise<PricedQuote[]> {
  const tariffs = await activeTariffs(platform.rm, offered.map((s) => s.id))
  const quotedAt = platform.clock().toISOString()
  const results = await Promise.all(offered.map(async (st): Promise<PricedQuote | undefined> => {
    const fallback = tariffPrice(tariffs.get(st.id), req)
    const base = { service_type_id: st.id, service_type_name: st.name, carrier_id: st.carrier.id, quoted_at: quotedAt }
    if (st.carrier.quote_mode === 'api' && st.carrier.quote_url) {
      const answer = await askCarrierForQuote(platform, st.carrier.id, st.carrier.quote_url, {
        service_type: { id: st.id, code: st.code, name: st.name },
        origin: req.origin.address,
        destination: req.destination.address,
        packages: req.packages,
        declared_value: req.declared_value,
      }, deadline).catch(() => undefined)
      if (answer) {
        return {
          ...base, price: answer.price, currency: answer.currency, estimated_delivery_days: answer.estimated_delivery_days,
          source: 'api', tariff_id: null, origin_zone: fallback?.originZone ?? null, destination_zone: fallback?.destinationZone ?? null,
          chargeable_grams: fallback?.grams ?? null,
        }
      }
    }
    if (!fallback) return undefined
    return {
      ...base, price: fallback.price, currency: fallback.currency, estimated_delivery_days: fallback.days, source: 'tariff',
      tariff_id: fallback.tariffId, origin_zone: fallback.originZone, destination_zone: fallback.destinationZone, chargeable_grams: fallback.grams,
    }
  }))
  return results.filter((q): q is PricedQuote => q !== undefined)
}

/** The public face of a quote (spec "Quote"). */
export const toQuote = (q: PricedQuote): Quote => ({
  service_type_id: q.service_type_id, service_type_name: q.service_type_name, price: q.price, currency: q.currency,
  estimated_delivery_days: q.estimated_delivery_days,
})
