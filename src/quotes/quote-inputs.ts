import type { QuoteBody } from '../../schemas/api/quotes.js'
import type { Platform } from '../platform.js'
import { ErrorBag } from '../shared/errors.js'
import { normalizeLengthUnit, normalizeWeightUnit, toCentimetres, toGrams } from '../shared/measures.js'
import type { PackageMeasures } from '../tariffs/pricing.js'
import type { ZoneLocation } from '../tariffs/zones.js'
import { numOrNull } from '../shared/rows.js'

/** An address as a quote needs it: where it is (for zones) and what the carrier's callback is shown. */
export interface QuoteAddress {
  location: ZoneLocation
  address: {
    zipcode: string | null
    city: { id: number; name: string } | null
    state: { id: number | null; code: string | null; name: string } | null
    country: { id: number | null; iso: string; name: string }
  }
}

type AddressInput = QuoteBody['origin']
type PackageInput = QuoteBody['packages'][number]


/** The three AddressInput modes of the spec, resolved to a location; errors go to `bag` under `path`. */
export async function resolveQuoteAddress(platform: Platform, organizationId: string, input: AddressInput, path: string, bag: ErrorBag): Promise<QuoteAddress | undefined> {
  if (input.id !== undefined && input.place_id !== undefined) {
    bag.add(`${path}.id`, 'The id and place_id fields exclude each other.')
    return undefined
  }
  if (input.id !== undefined) {
    // The shipments read model keeps every address a shipment created.
    const row = await (platform.rm as any).selectFrom('addresses').selectAll()
      .where('id', '=', input.id).where('organization_id', '=', organizationId).executeTakeFirst().catch(() => undefined)
    if (!row) { bag.add(`${path}.id`, 'The selected id is invalid.'); return undefined }
    return fromRow(row, 'country_iso')
  }
  if (input.place_id !== undefined) {
    const row = await platform.rm.selectFrom('places').selectAll().where('id', '=', input.place_id).where('organization_id', '=', organizationId).executeTakeFirst()
    if (!row) { bag.add(`${path}.place_id`, 'The selected place_id is invalid.'); return undefined }
    return fromRow(row, 'country_code')
  }
  const loc = await platform.geocoder.resolveLocation({
    city_id: input.city_id ?? null, state_id: input.state_id ?? null, country_id: input.country_id ?? null,
    city: input.city ?? null, state: input.state ?? null, country: input.country ?? null,
  })
  if (!loc.ok) {
    for (const [field, messages] of Object.entries(loc.errors)) for (const m of messages ?? []) bag.add(`${path}.${field}`, m)
    return undefined
  }
  const zipcode = input.zipcode?.trim() || null
  return {
    location: { countryIso: loc.country.iso, stateCode: loc.state?.code ?? null, stateName: loc.state?.name ?? null, cityId: loc.city.id, zipcode },
    address: {
      zipcode, city: loc.city,
      state: loc.state ? { id: loc.state.id, code: loc.state.code, name: loc.state.name } : null,
      country: { id: loc.country.id, iso: loc.country.iso, name: loc.country.name },
    },
  }
}

function fromRow(row: any, isoColumn: 'country_iso' | 'country_code'): QuoteAddress {
  const iso = String(row[isoColumn] ?? '')
  return {
    location: { countryIso: iso, stateCode: row.state_code ?? null, stateName: row.state_name ?? null, cityId: numOrNull(row.city_id), zipcode: row.zipcode ?? null },
    address: {
      zipcode: row.zipcode ?? null,
      city: row.city_id !== null && row.city_id !== undefined ? { id: Number(row.city_id), name: row.city_name } : null,
      state: row.state_name ? { id: numOrNull(row.state_id), code: row.state_code ?? null, name: row.state_name } : null,
      country: { id: numOrNull(row.country_id), iso, name: row.country_name ?? iso },
    },
  }
}

/**
 * Weight and dimensions of each package in grams and centimetres: the normalized fields, or a
 * value with its unit, or a package reused by `id`.
 */
export async function resolveQuotePackages(platform: Platform, organizationId: string, packages: PackageInput[], bag: ErrorBag): Promise<PackageMeasures[]> {
  const out: PackageMeasures[] = []
  for (const [i, p] of packages.entries()) {
    const at = `packages.${i}`
    if (p.id != null) {
      const row = await (platform.rm as any).selectFrom('shipment_packages').select(['grams', 'length_cm', 'width_cm', 'height_cm'])
        .where('id', '=', p.id).where('shipper_id', '=', organizationId).executeTakeFirst().catch(() => undefined)
      if (!row) bag.add(`${at}.id`, 'The selected id is invalid.')
      else out.push({ grams: Number(row.grams), length: Number(row.length_cm), width: Number(row.width_cm), height: Number(row.height_cm) })
      continue
    }
    let grams: number | undefined = p.grams ?? undefined
    if (grams === undefined) {
      if (p.original_weight == null) bag.add(`${at}.grams`, 'The grams field is required unless original_weight and weight_unit are sent.')
      else {
        const unit = normalizeWeightUnit(p.weight_unit)
        if (!unit) bag.add(`${at}.weight_unit`, p.weight_unit === undefined ? 'The weight unit field is required when original_weight is sent.' : 'The selected weight unit is invalid; allowed: g, kg, mg, lbs.')
        else grams = toGrams(p.original_weight, unit)
      }
    }
    const dims: number[] = []
    for (const d of ['length', 'width', 'height'] as const) {
      const direct = p[d] ?? undefined
      if (direct !== undefined) { dims.push(direct); continue }
      const original = p[`original_${d}`] ?? undefined
      const rawUnit = p[`${d}_unit`]
      if (original === undefined) { bag.add(`${at}.${d}`, `The ${d} field is required.`); continue }
      const unit = normalizeLengthUnit(rawUnit)
      if (!unit) { bag.add(`${at}.${d}_unit`, `The selected ${d} unit is invalid; allowed: cm, m, mm, in.`); continue }
      dims.push(toCentimetres(original, unit))
    }
    if (grams !== undefined && dims.length === 3) out.push({ grams, length: dims[0]!, width: dims[1]!, height: dims[2]! })
  }
  return out
}
