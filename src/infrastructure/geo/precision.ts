import { countrystatecityGazetteer } from './countrystatecity-gazetteer.js'
import { FIRST_ADDED_CITY_ID, type Gazetteer } from './gazetteer.js'

/**
 * How far an address's coordinates can be trusted (DESIGN §3.10): `exact` (sent by the caller),
 * `city` (the gazetteer city's point), `state` or `country` (an unknown town placed at its state's
 * or country's centre, §3.4b). The last two are not a place to drive to.
 */
export type AddressPrecision = 'exact' | 'city' | 'state' | 'country'

export const ADDRESS_PRECISIONS: readonly AddressPrecision[] = ['exact', 'city', 'state', 'country']

const isAddressPrecision = (v: unknown): v is AddressPrecision => ADDRESS_PRECISIONS.some((p) => p === v)

/** An address in either stored form: the event snapshot (`city: {id}`) or the read-model row (`city_id`). */
export interface Located {
  geo_precision?: unknown
  geo_latitude?: unknown
  geo_longitude?: unknown
  city_id?: unknown
  state_id?: unknown
  country_id?: unknown
  city?: unknown
  state?: unknown
  country?: unknown
}

const idOf = (flat: unknown, nested: unknown): number | null => {
  const v = flat ?? (typeof nested === 'object' && nested !== null && 'id' in nested ? nested.id : undefined)
  const n = v === null || v === undefined ? NaN : Number(v)
  return Number.isSafeInteger(n) ? n : null
}

const same = (a: number, b: number | null | undefined) => b !== null && b !== undefined && Math.abs(a - b) < 1e-6

/**
 * The address's precision: the one recorded with it (events from issue 23 on), else derived from
 * what every stored address has (coordinates and gazetteer ids), by the geocoder's own rule read
 * backwards: a gazetteer city's own point is `city`; a town recorded at run time (ids from
 * 10,000,000) sits at its state's centre (`state`) or, without one, its country's (`country`); any
 * other point was given by the caller (`exact`). Deterministic, so a rebuild fills old addresses.
 * Null when the address has no coordinates.
 */
export function addressPrecision(a: Located | null | undefined, gazetteer: Gazetteer = countrystatecityGazetteer()): AddressPrecision | null {
  if (!a) return null
  if (a.geo_latitude === null || a.geo_latitude === undefined || a.geo_longitude === null || a.geo_longitude === undefined) return null
  const lat = Number(a.geo_latitude)
  const lng = Number(a.geo_longitude)
  if (!Number.isFinite(lat) || !Number.isFinite(lng)) return null
  if (isAddressPrecision(a.geo_precision)) return a.geo_precision
  const cityId = idOf(a.city_id, a.city)
  if (cityId !== null && cityId < FIRST_ADDED_CITY_ID) {
    const city = gazetteer.cityById(cityId)
    if (city && same(lat, city.latitude) && same(lng, city.longitude)) return 'city'
  }
  if (cityId === null || cityId >= FIRST_ADDED_CITY_ID) {
    const stateId = idOf(a.state_id, a.state)
    const state = stateId === null ? undefined : gazetteer.stateById(stateId)
    if (state && same(lat, state.latitude) && same(lng, state.longitude)) return 'state'
    const countryId = idOf(a.country_id, a.country)
    const country = countryId === null ? undefined : gazetteer.country(countryId)
    if (country && same(lat, country.latitude) && same(lng, country.longitude)) return 'country'
  }
  return 'exact'
}

export interface Point { lat: number; lng: number }

/**
 * The point to drive to, or undefined: no coordinates, or only a state's or country's centre
 * (planning, optimize and ETAs treat those as "no coordinates", DESIGN §3.10).
 */
export function drivablePoint(a: Located | null | undefined, gazetteer?: Gazetteer): Point | undefined {
  const precision = addressPrecision(a, gazetteer)
  if (precision === null || precision === 'state' || precision === 'country') return undefined
  return { lat: Number(a!.geo_latitude), lng: Number(a!.geo_longitude) }
}
