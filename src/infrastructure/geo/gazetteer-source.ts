/**
 * Reads the offline data of @countrystatecity/countries (ODbL-1.0: the dr5hn countries-states-
 * cities database; attribution in docs/decisions.md) into the gazetteer's columns, with the ids of
 * ./legacy-ids.ts. Only building the index reads it: dist/data holds a countries.json, a
 * states.json per country and a cities.json per state (~45 MB of JSON in ~4,300 files, read one
 * at a time).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { buildCityColumns, type CityRow } from './compact-cities.js'
import type { Country } from './gazetteer.js'
import type { GazetteerColumns, StoredState } from './gazetteer-columns.js'
import { legacyIds } from './legacy-ids.js'

const require = createRequire(import.meta.url)

/** Raise when this file derives the gazetteer otherwise: it is part of the prebuilt index's key. */
export const SOURCE_RULES_VERSION = 5

/** .../node_modules/@countrystatecity/countries/dist/data */
export function sourceDataDir(): string {
  return join(require.resolve('@countrystatecity/countries/data/countries.json'), '..')
}

export function sourceVersion(): string {
  return (JSON.parse(readFileSync(join(sourceDataDir(), '..', '..', 'package.json'), 'utf8')) as { version: string }).version
}

interface RawCountry { iso2: string, name: string, latitude: string | null, longitude: string | null }
interface RawState { id: number, name: string, country_code: string, iso2: string, latitude: string | null, longitude: string | null }
interface RawCity { id: number, name: string, state_id: number, state_code: string, country_code: string, latitude: string, longitude: string }

function coordinate(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value.trim() === '') return null
  const n = Number(value)
  return Number.isFinite(n) ? n : null
}

export function countryIdOf(iso: string): number | undefined {
  if (!/^[A-Z]{2}$/.test(iso)) return undefined
  return (iso.charCodeAt(0) - 65) * 26 + (iso.charCodeAt(1) - 65) + 1
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T
const subdirectories = (dir: string): string[] =>
  readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory()).sort()

export function readGazetteerSource(dataDir: string = sourceDataDir()): GazetteerColumns {
  const ids = legacyIds()
  const countries: Country[] = []
  for (const raw of readJson<RawCountry[]>(join(dataDir, 'countries.json'))) {
    const id = countryIdOf(raw.iso2)
    const latitude = coordinate(raw.latitude)
    const longitude = coordinate(raw.longitude)
    if (id === undefined || latitude === null || longitude === null) continue
    countries.push({ id, iso: raw.iso2, name: raw.name, latitude, longitude })
  }
  countries.sort((a, b) => a.id - b.id)

  const states: StoredState[] = [...ids.retiredStates]
  const cities: CityRow[] = [...ids.retiredCities]
  for (const countryDir of subdirectories(dataDir)) {
    const stateOf = new Map<number, StoredState>()
    for (const raw of readJson<RawState[]>(join(dataDir, countryDir, 'states.json'))) {
      const id = ids.stateIdOf(raw.id)
      const formerCode = ids.formerStateCodes.get(id)
      const state: StoredState = {
        id, code: raw.iso2, name: raw.name, countryIso: raw.country_code,
        latitude: coordinate(raw.latitude), longitude: coordinate(raw.longitude), findable: true,
        ...(formerCode !== undefined ? { formerCodes: [formerCode] } : {}),
      }
      stateOf.set(raw.id, state)
      states.push(state)
    }
    for (const stateDir of subdirectories(join(dataDir, countryDir))) {
      for (const raw of readJson<RawCity[]>(join(dataDir, countryDir, stateDir, 'cities.json'))) {
        const latitude = coordinate(raw.latitude)
        const longitude = coordinate(raw.longitude)
        if (latitude === null || longitude === null) continue
        // The state's own code: a few cities' state_code disagrees with it (Mexico City's "CDMX"
        // under the state "CMX"), and lookups go through the state's code.
        const state = stateOf.get(raw.state_id)
        cities.push({
          id: ids.cityIdOf(raw.id), name: raw.name, countryIso: raw.country_code, stateCode: state?.code ?? raw.state_code,
          stateId: state?.id ?? null, latitude, longitude, findable: true,
        })
      }
    }
  }
  states.sort((a, b) => a.id - b.id)
  // An old city kept by id names its state by the old code; the state (same id) may have a new one.
  const stateById = new Map(states.map((s) => [s.id, s]))
  for (const city of ids.retiredCities) city.stateCode = (city.stateId !== null ? stateById.get(city.stateId)?.code : undefined) ?? city.stateCode
  return { countries, states, cities: buildCityColumns(cities), cityAliases: ids.aliases }
}
