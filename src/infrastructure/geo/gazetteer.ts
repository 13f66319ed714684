/**
 * Port: read-only reference geography (countries, states, cities) with stable integer ids.
 * Lookups are synchronous; an adapter loads its data once and answers from memory.
 * Names match without regard to case, accents and punctuation (see `foldName`).
 */

export interface Country {
  id: number
  /** ISO 3166-1 alpha-2, upper case. */
  iso: string
  name: string
  latitude: number
  longitude: number
}

export interface State {
  id: number
  /** ISO 3166-2 subdivision code without the country prefix ("X" for Córdoba, AR). */
  code: string
  name: string
  countryIso: string
  /** Null when the gazetteer has no centre for the state. */
  latitude: number | null
  longitude: number | null
  /**
   * Codes the state had in earlier gazetteer data, still accepted by `state()`; addresses recorded
   * then (added cities are stored by state code) may carry one. Absent for most states.
   */
  formerCodes?: string[]
}

export interface City {
  id: number
  name: string
  /** Null only for cities recorded without a known state (see AddedCities). */
  stateId: number | null
  stateCode: string | null
  countryIso: string
  latitude: number
  longitude: number
}

export interface Gazetteer {
  /** By ISO alpha-2 code (any case), by English name, or by id. */
  country(codeOrId: string | number): Country | undefined
  /**
   * By ISO 3166-2 code (bare "CA" or prefixed "US-CA") or by name; a generic designator such as
   * "Province", "State", "Department" may be added or left out ("Córdoba Province" = "Cordoba").
   */
  state(countryIso: string, nameOrCode: string): State | undefined
  stateById(id: number): State | undefined
  /**
   * A gazetteer city by name within a state, or within the whole country when `stateCode` is
   * undefined; in the latter case undefined also when several cities of the country share the name.
   */
  city(countryIso: string, stateCode: string | undefined, name: string): City | undefined
  cityById(id: number): City | undefined
}

/** Ids of cities recorded at run time start here, so they never collide with gazetteer ids. */
export const FIRST_ADDED_CITY_ID = 10_000_000
