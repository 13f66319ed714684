/**
 * Port: turns the location part of an AddressInput into gazetteer records and coordinates
 * (DESIGN §2 "Geocoding", §3.4b). The offline adapter is GazetteerGeocoder; an HTTP geocoder
 * may implement the same port later.
 */

/** The location fields of an AddressInput, as received (null and blank mean "not sent"). */
export interface LocationInput {
  city_id?: number | null
  state_id?: number | null
  country_id?: number | null
  city?: string | null
  state?: string | null
  /** ISO 3166-1 alpha-2 code (an English country name is tolerated). */
  country?: string | null
}

export type LocationField = keyof LocationInput

/** How close the coordinates are: the city's own point, or the centre of its state or country. */
export type GeoPrecision = 'city' | 'state' | 'country'

export interface ResolvedLocation {
  ok: true
  city: { id: number, name: string }
  /** Null when the address named no state the gazetteer knows and the city did not imply one. */
  state: { id: number, code: string, name: string } | null
  country: { id: number, iso: string, name: string }
  latitude: number
  longitude: number
  precision: GeoPrecision
}

export interface LocationErrors {
  ok: false
  /** Keyed by input field name (`city_id`, `country`, ...); callers prefix their own path. */
  errors: Partial<Record<LocationField, string[]>>
}

export type LocationResult = ResolvedLocation | LocationErrors

export interface Geocoder {
  resolveLocation(input: LocationInput): Promise<LocationResult>
}
