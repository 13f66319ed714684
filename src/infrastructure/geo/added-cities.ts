/**
 * Port: cities that the gazetteer lacks, recorded the first time an address names them
 * (DESIGN §3.4b) and shared by every server process. Ids start at FIRST_ADDED_CITY_ID.
 */

export interface AddedCity {
  id: number
  name: string
  countryIso: string
  /** ISO 3166-2 code of the state, or null when the address named no known state. */
  stateCode: string | null
  latitude: number
  longitude: number
}

export interface NewCity {
  name: string
  /** `foldName(name)`: the key a city is matched by. */
  normalizedName: string
  countryIso: string
  stateCode: string | null
  latitude: number
  longitude: number
}

export interface AddedCities {
  find(countryIso: string, stateCode: string | null, normalizedName: string): Promise<AddedCity | undefined>
  findById(id: number): Promise<AddedCity | undefined>
  /**
   * Records the city unless one with the same (country, state, normalized name) exists, and
   * returns the stored one: concurrent adds of one city all get the same id.
   */
  add(city: NewCity): Promise<AddedCity>
}
