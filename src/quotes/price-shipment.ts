import type { Platform } from '../platform.js'
import type { PackageMeasures } from '../tariffs/pricing.js'
import { serviceTypeById } from '../carriers/availability.js'
import { quoteServiceTypes, type PricedQuote } from './quote-engine.js'
import type { QuoteAddress } from './quote-inputs.js'

/** The address fields a shipment snapshot has (schemas/events/shipments.ts AddressSnapshot). */
export interface AddressLike {
  zipcode: string | null
  city: { id: number; name: string } | null
  state: { id: number; name: string; code: string | null } | null
  country: { id: number; name: string; iso: string } | null
}

/** A package as measured: normalized numbers, or the snapshot's measure objects. */
export type PackageLike =
  | PackageMeasures
  | { weight: { value: number }; length: { value: number }; width: { value: number }; height: { value: number } }

export const quoteAddressOf = (a: AddressLike): QuoteAddress => ({
  location: { countryIso: a.country?.iso ?? '', stateCode: a.state?.code ?? null, stateName: a.state?.name ?? null, cityId: a.city?.id ?? null, zipcode: a.zipcode },
  address: {
    zipcode: a.zipcode, city: a.city,
    state: a.state ? { id: a.state.id, code: a.state.code, name: a.state.name } : null,
    country: a.country ? { id: a.country.id, iso: a.country.iso, name: a.country.name } : { id: null, iso: '', name: '' },
  },
})

const measuresOf = (p: PackageLike): PackageMeasures =>
  'weight' in p
    ? { grams: p.weight.value, length: p.length.value, width: p.width.value, height: p.height.value }
    : { grams: p.grams, length: p.length, width: p.width, height: p.height }

/**
 * Prices a shipment created with `service_type_id` the way `POST /shipments/quotes` would (carrier
 * callback in quote mode `api`, else the active tariff). The result is what the shipment keeps in
 * `custom_data.quote`; undefined when the service type is unknown or cannot be priced.
 */
export async function priceShipment(platform: Platform, input: {
  service_type_id: number
  origin: AddressLike
  destination: AddressLike
  packages: PackageLike[]
  declared_value: number | null
}): Promise<PricedQuote | undefined> {
  const st = await serviceTypeById(platform, input.service_type_id)
  if (!st) return undefined
  const [quote] = await quoteServiceTypes(platform, [st], {
    origin: quoteAddressOf(input.origin),
    destination: quoteAddressOf(input.destination),
    packages: input.packages.map(measuresOf),
    declared_value: input.declared_value,
  })
  return quote
}
