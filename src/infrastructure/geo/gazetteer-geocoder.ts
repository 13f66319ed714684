/**
 * Offline Geocoder: resolves an address's location against the gazetteer, recording unknown
 * cities (DESIGN §3.4b).
 *
 * Rules, in the order they apply:
 * - `city_id` given: the city (gazetteer or recorded) must exist; `state_id`/`country_id`, if
 *   sent, must exist and agree with it; the name fields are then ignored.
 * - Otherwise `city` (a name) is required, and the country comes from `country_id`, `country`
 *   (ISO alpha-2, or an English name) or `state_id`; ids and codes that do not exist, or
 *   disagree, are errors. `state_id`, when sent, wins over a `state` name or code.
 * - A state name or code the gazetteer does not know is not an error: the city is then looked up
 *   in the whole country (kept if the name is unique there) or recorded with no state.
 * - A city name the gazetteer does not know is recorded (once) under the state, or under the
 *   country alone; its coordinates are the state's centre, else the country's.
 */
import { foldName, tidyName } from '../../shared/text.js'
import { type AddedCities, type AddedCity } from './added-cities.js'
import { type City, type Country, FIRST_ADDED_CITY_ID, type Gazetteer, type State } from './gazetteer.js'
import {
  type GeoPrecision, type Geocoder, type LocationErrors, type LocationField, type LocationInput,
  type LocationResult, type ResolvedLocation,
} from './geocoder.js'

/** Same bound as the other free-text address lines (street, name). */
export const MAX_CITY_NAME_LENGTH = 100

type Errors = LocationErrors['errors']

function fail(errors: Errors, field: LocationField, message: string): void {
  (errors[field] ??= []).push(message)
}

function idField(input: LocationInput, field: 'city_id' | 'state_id' | 'country_id', errors: Errors): number | undefined {
  const value: unknown = input[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    fail(errors, field, 'must be a positive integer')
    return undefined
  }
  return value
}

function textField(input: LocationInput, field: 'city' | 'state' | 'country', errors: Errors): string | undefined {
  const value: unknown = input[field]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') {
    fail(errors, field, 'must be a string')
    return undefined
  }
  return value.trim() === '' ? undefined : value
}

function hasCentre(state: State | undefined): state is State & { latitude: number, longitude: number } {
  return state !== undefined && state.latitude !== null && state.longitude !== null
}

export class GazetteerGeocoder implements Geocoder {
  constructor(
    private readonly gazetteer: Gazetteer,
    private readonly addedCities: AddedCities,
  ) {}

  async resolveLocation(input: LocationInput): Promise<LocationResult> {
    const errors: Errors = {}
    const cityId = idField(input, 'city_id', errors)
    const stateId = idField(input, 'state_id', errors)
    const countryId = idField(input, 'country_id', errors)
    const cityName = textField(input, 'city', errors)
    const stateText = textField(input, 'state', errors)
    const countryText = textField(input, 'country', errors)

    let country: Country | undefined
    if (countryId !== undefined) {
      country = this.gazetteer.country(countryId)
      if (!country) fail(errors, 'country_id', 'does not exist')
    }
    let state: State | undefined
    if (stateId !== undefined) {
      state = this.gazetteer.stateById(stateId)
      if (!state) fail(errors, 'state_id', 'does not exist')
      else if (country && state.countryIso !== country.iso) {
        fail(errors, 'state_id', `is not a state of country ${country.iso}`)
        state = undefined
      }
    }

    if (cityId !== undefined) return this.byCityId(cityId, state, country, errors)
    if (input.city_id !== undefined && input.city_id !== null) return { ok: false, errors }

    if (countryText !== undefined) {
      const named = this.gazetteer.country(countryText)
      if (!named) fail(errors, 'country', 'is not a known ISO 3166-1 alpha-2 country code')
      else if (country && named.id !== country.id) fail(errors, 'country', 'does not match country_id')
      else if (state && named.iso !== state.countryIso) fail(errors, 'state_id', `is not a state of country ${named.iso}`)
      else country ??= named
    }
    if (!country && state && !errors.state_id) country = this.gazetteer.country(state.countryIso)
    if (!country && !errors.country && !errors.country_id && !errors.state_id) fail(errors, 'country', 'is required')

    const folded = cityName === undefined ? '' : foldName(cityName)
    if (cityName === undefined) fail(errors, 'city', 'is required')
    else if (cityName.length > MAX_CITY_NAME_LENGTH) fail(errors, 'city', `is too long (maximum ${MAX_CITY_NAME_LENGTH} characters)`)
    else if (folded === '') fail(errors, 'city', 'must contain letters or digits')

    if (Object.keys(errors).length > 0 || !country || cityName === undefined) return { ok: false, errors }

    if (!state && stateText !== undefined) state = this.gazetteer.state(country.iso, stateText)
    const known = this.gazetteer.city(country.iso, state?.code, cityName)
    if (known) return this.located(known, country)

    const stateCode = state?.code ?? null
    const recorded = await this.addedCities.find(country.iso, stateCode, folded) ??
      await this.recordedUnderFormerCode(country.iso, state, folded) ??
      await this.addedCities.add({
        name: tidyName(cityName),
        normalizedName: folded,
        countryIso: country.iso,
        stateCode,
        latitude: hasCentre(state) ? state.latitude : country.latitude,
        longitude: hasCentre(state) ? state.longitude : country.longitude,
      })
    return this.located(this.asCity(recorded), country)
  }

  /** A city recorded before its state's ISO code changed is stored under the old code. */
  private async recordedUnderFormerCode(countryIso: string, state: State | undefined, folded: string): Promise<AddedCity | undefined> {
    for (const code of state?.formerCodes ?? []) {
      const recorded = await this.addedCities.find(countryIso, code, folded)
      if (recorded) return recorded
    }
    return undefined
  }

  private async byCityId(id: number, state: State | undefined, country: Country | undefined, errors: Errors): Promise<LocationResult> {
    let city = this.gazetteer.cityById(id)
    if (!city && id >= FIRST_ADDED_CITY_ID) {
      const recorded = await this.addedCities.findById(id)
      if (recorded) city = this.asCity(recorded)
    }
    if (!city) fail(errors, 'city_id', 'does not exist')
    else {
      if (state && city.stateId !== state.id) fail(errors, 'state_id', 'does not match city_id')
      if (country && city.countryIso !== country.iso) fail(errors, 'country_id', 'does not match city_id')
    }
    if (Object.keys(errors).length > 0 || !city) return { ok: false, errors }
    const cityCountry = this.gazetteer.country(city.countryIso)
    if (!cityCountry) throw new Error(`city ${city.id} names unknown country ${city.countryIso}`)
    return this.located(city, cityCountry)
  }

  private asCity(recorded: AddedCity): City {
    const state = recorded.stateCode === null ? undefined : this.gazetteer.state(recorded.countryIso, recorded.stateCode)
    return { ...recorded, stateId: state?.id ?? null }
  }

  private located(city: City, country: Country): ResolvedLocation {
    const state = city.stateId === null ? undefined : this.gazetteer.stateById(city.stateId)
    let precision: GeoPrecision = 'city'
    if (city.id >= FIRST_ADDED_CITY_ID) precision = hasCentre(state) ? 'state' : 'country'
    return {
      ok: true,
      city: { id: city.id, name: city.name },
      state: state ? { id: state.id, code: state.code, name: state.name } : null,
      country: { id: country.id, iso: country.iso, name: country.name },
      latitude: city.latitude,
      longitude: city.longitude,
      precision,
    }
  }
}
