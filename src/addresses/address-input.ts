import type { AddressSnapshot } from '../../schemas/events/shipments.js'
import type { ErrorBag } from '../shared/errors.js'
import { newUlid } from '../shared/ids.js'
import { normalizePhone } from '../shared/phone.js'
import type { Platform } from '../platform.js'
import { findPlace } from '../organizations/queries.js'
import { addressPrecision } from '../infrastructure/geo/precision.js'

/**
 * AddressInput (spec): exactly one of three modes — `id` (an address of the caller's, reused
 * unchanged), `place_id` (a saved place of the caller's, copied), or a full new address
 * (validated, location resolved against the gazetteer, geocoded when coordinates are omitted).
 *
 * The input may have failed schema validation already: every check here looks at a field only
 * when it has the right type, so its errors can be merged with the schema's (all at once).
 */

const LOCATION_AND_DATA_FIELDS = [
  'name', 'street', 'street_number', 'floor', 'apartment', 'reference', 'city_id', 'city', 'state_id', 'state',
  'country_id', 'country', 'zipcode', 'phone', 'email', 'document_type', 'document_number', 'geo_latitude', 'geo_longitude',
] as const

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const given = (v: unknown): boolean => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '')
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null)

export const newAddressId = (): string => `adr_${newUlid().toLowerCase()}`

export type AddressMode = 'id' | 'place' | 'new'

/** Mode and the field rules that need no lookup. Returns the mode, or null when it cannot tell. */
export function checkAddressInput(raw: unknown, path: string, bag: ErrorBag): AddressMode | null {
  if (!isObj(raw)) return null
  const hasId = given(raw.id)
  const hasPlace = given(raw.place_id)
  if (hasId && hasPlace) {
    bag.add(`${path}.id`, 'The id field may not be sent together with place_id.')
    bag.add(`${path}.place_id`, 'The place_id field may not be sent together with id.')
    return null
  }
  if (hasId || hasPlace) {
    const mode = hasId ? 'id' : 'place_id'
    for (const f of LOCATION_AND_DATA_FIELDS) {
      if (given(raw[f])) bag.add(`${path}.${f}`, `The ${f.replace(/_/g, ' ')} field is not allowed when ${mode} is sent.`)
    }
    if (hasPlace && typeof raw.place_id === 'string' && !raw.place_id.startsWith('ple_')) {
      bag.add(`${path}.place_id`, 'The place id must start with ple_.')
    }
    return hasId ? 'id' : 'place'
  }
  for (const f of ['name', 'street', 'street_number'] as const) {
    if (!given(raw[f])) bag.add(`${path}.${f}`, `The ${f.replace(/_/g, ' ')} field is required.`)
  }
  if (!given(raw.city_id)) {
    if (!given(raw.city)) bag.add(`${path}.city`, 'The city field is required when city_id is not present.')
    if (!given(raw.country) && !given(raw.country_id) && !given(raw.state_id)) {
      bag.add(`${path}.country`, 'The country field is required when city_id is not present.')
    }
  }
  if (typeof raw.country === 'string' && raw.country.trim() !== '' && !/^[A-Za-z]{2}$/.test(raw.country.trim())) {
    bag.add(`${path}.country`, 'The country must be an ISO 3166-1 alpha-2 code (2 letters).')
  }
  if (given(raw.document_type) && !given(raw.document_number)) {
    bag.add(`${path}.document_number`, 'The document number field is required when document type is present.')
  }
  const lat = raw.geo_latitude; const lng = raw.geo_longitude
  if ((typeof lat === 'number') !== (typeof lng === 'number') && (given(lat) || given(lng))) {
    bag.add(`${path}.${given(lat) ? 'geo_longitude' : 'geo_latitude'}`, 'Send both geo_latitude and geo_longitude, or neither.')
  }
  return 'new'
}

/**
 * Resolves an input whose static checks passed into the snapshot stored with the shipment;
 * lookup failures go to `bag` (unknown id or place, unknown location, invalid phone).
 */
export async function resolveAddress(
  platform: Platform, orgId: string, raw: Obj, mode: AddressMode, path: string, bag: ErrorBag,
): Promise<AddressSnapshot | null> {
  if (mode === 'id') {
    const id = String(raw.id).trim()
    const row = await platform.rm.selectFrom('addresses').selectAll().where('id', '=', id).where('organization_id', '=', orgId).executeTakeFirst()
    if (!row) { bag.add(`${path}.id`, 'The selected address id is invalid.'); return null }
    return {
      id: row.id, created: false, organization_id: row.organization_id, place_id: row.place_id, name: row.name, street: row.street,
      street_number: row.street_number, floor: row.floor, apartment: row.apartment, reference: row.reference, zipcode: row.zipcode,
      phone: row.phone, email: row.email, document_type: row.document_type, document_number: row.document_number,
      city: row.city_id == null ? null : { id: Number(row.city_id), name: row.city_name ?? '' },
      state: row.state_id == null ? null : { id: Number(row.state_id), name: row.state_name ?? '', code: row.state_code },
      country: row.country_id == null ? null : { id: Number(row.country_id), name: row.country_name ?? '', iso: row.country_iso ?? '' },
      geo_latitude: row.geo_latitude, geo_longitude: row.geo_longitude, geo_precision: addressPrecision(row),
    }
  }
  if (mode === 'place') {
    const placeId = String(raw.place_id).trim()
    const place = await findPlace(platform.rm, orgId, placeId)
    if (!place) { bag.add(`${path}.place_id`, 'The selected place id is invalid.'); return null }
    return {
      id: newAddressId(), created: true, organization_id: orgId, place_id: place.id, name: place.name,
      street: place.street ?? '', street_number: place.street_number ?? '', floor: place.floor, apartment: place.apartment,
      reference: place.reference, zipcode: place.zipcode, phone: place.phone, email: place.email,
      document_type: null, document_number: null,
      city: place.city_id == null ? null : { id: Number(place.city_id), name: place.city_name ?? '' },
      state: place.state_id == null ? null : { id: Number(place.state_id), name: place.state_name ?? '', code: place.state_code },
      country: place.country_id == null ? null : { id: Number(place.country_id), name: place.country_name ?? '', iso: place.country_code ?? '' },
      geo_latitude: place.geo_latitude, geo_longitude: place.geo_longitude, geo_precision: addressPrecision(place),
    }
  }
  const loc = await platform.geocoder.resolveLocation({
    city_id: int(raw.city_id), state_id: int(raw.state_id), country_id: int(raw.country_id),
    city: str(raw.city), state: str(raw.state), country: str(raw.country),
  })
  if (!loc.ok) {
    for (const [field, msgs] of Object.entries(loc.errors)) for (const m of msgs ?? []) bag.add(`${path}.${field}`, m)
  }
  let phone: string | null = null
  const rawPhone = str(raw.phone)
  if (rawPhone) {
    const p = normalizePhone(rawPhone, loc.ok ? loc.country.iso : undefined)
    if (p.ok) phone = p.e164
    else bag.add(`${path}.phone`, 'The phone must be a valid phone number (E.164, or national for the address\'s country).')
  }
  if (!loc.ok) return null
  const manual = typeof raw.geo_latitude === 'number' && typeof raw.geo_longitude === 'number'
  return {
    id: newAddressId(), created: true, organization_id: orgId, place_id: null,
    name: str(raw.name) ?? '', street: str(raw.street) ?? '', street_number: str(raw.street_number) ?? '',
    floor: str(raw.floor), apartment: str(raw.apartment), reference: str(raw.reference), zipcode: str(raw.zipcode),
    phone, email: str(raw.email), document_type: str(raw.document_type), document_number: str(raw.document_number),
    city: loc.city, state: loc.state ? { id: loc.state.id, name: loc.state.name, code: loc.state.code } : null,
    country: { id: loc.country.id, name: loc.country.name, iso: loc.country.iso },
    geo_latitude: manual ? (raw.geo_latitude as number) : loc.latitude,
    geo_longitude: manual ? (raw.geo_longitude as number) : loc.longitude,
    geo_precision: manual ? 'exact' : loc.precision,
  }
}
