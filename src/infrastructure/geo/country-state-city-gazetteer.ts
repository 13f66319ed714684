/**
 * Gazetteer adapter over the offline data of the `country-state-city` package (pinned 3.2.1).
 *
 * Ids: the package has none, so they are derived deterministically.
 * - Country id: from the two ISO letters, (first − 'A') × 26 + (second − 'A') + 1, so 1..676
 *   ("AR" = 18, "US" = 539). Stable forever, whatever the package adds or removes.
 * - State id: 1-based position after sorting by (country ISO, state ISO code).
 * - City id: 1-based position after sorting by (country ISO, state code, name, latitude, longitude).
 * Sorting compares UTF-16 code units, never the locale, so ids do not depend on ICU or Node.
 * State and city ids are stable for the pinned package version only: upgrading the package can
 * renumber them, which test/infrastructure/geo/country-state-city-gazetteer.test.ts pins and would
 * flag; such an upgrade needs a mapping of old ids to new ones.
 *
 * The JSON files are read on first use, once per process. Countries and states are indexed in Maps;
 * the ~150k cities in the compact columns of ./compact-cities.ts, loaded from the prebuilt file of
 * ./city-index-cache.ts when there is one (scanning the 8 MB city.json costs ~50 MB of peak RSS).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { foldName } from '../../shared/text.js'
import { loadCityColumns } from './city-index-cache.js'
import { CompactCities } from './compact-cities.js'
import type { City, Country, Gazetteer, State } from './gazetteer.js'

interface RawCountry { name: string, isoCode: string, latitude: string, longitude: string }
interface RawState { name: string, isoCode: string, countryCode: string, latitude: string | null, longitude: string | null }

const require = createRequire(import.meta.url)

function readAssetText(file: 'country' | 'state'): string {
  return readFileSync(require.resolve(`country-state-city/lib/assets/${file}.json`), 'utf8')
}

function readAsset<T>(file: 'country' | 'state'): T {
  return JSON.parse(readAssetText(file)) as T
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function coordinate(value: string | null | undefined): number | null {
  if (value === null || value === undefined || value.trim() === '') return null
  const n = Number(value)
  return Number.isFinite(n) ? n : null
}

export function countryIdOf(iso: string): number | undefined {
  if (!/^[A-Z]{2}$/.test(iso)) return undefined
  return (iso.charCodeAt(0) - 65) * 26 + (iso.charCodeAt(1) - 65) + 1
}

// Generic words around subdivision names, folded; people add or drop them freely.
const DESIGNATOR_PREFIXES = [
  'province of', 'provincia de', 'provincia del', 'provincia', 'state of', 'estado de', 'estado do',
  'estado', 'departamento de', 'departamento del', 'department of', 'region of', 'region de',
  'region del', 'canton of',
]
const DESIGNATOR_SUFFIXES = [
  'province', 'provincia', 'state', 'estado', 'region', 'department', 'departamento', 'district',
  'municipality', 'county', 'governorate', 'prefecture', 'oblast', 'parish', 'voivodeship',
  'canton', 'krai', 'kraj', 'emirate', 'territory',
]

function withoutDesignator(folded: string): string | undefined {
  let out = folded
  const prefix = DESIGNATOR_PREFIXES.find((p) => out.startsWith(`${p} `))
  if (prefix) out = out.slice(prefix.length + 1)
  const suffix = DESIGNATOR_SUFFIXES.find((s) => out.endsWith(` ${s}`))
  if (suffix) out = out.slice(0, out.length - suffix.length - 1)
  return out !== folded && out !== '' ? out : undefined
}

interface CountryIndex {
  list: Country[]
  byIso: Map<string, Country>
  byId: Map<number, Country>
  byName: Map<string, Country>
}

interface StateIndex {
  /** Position id − 1. */
  list: State[]
  byCode: Map<string, State>
  byName: Map<string, State>
  /** Names without their designator; null where two states of a country would collide. */
  byBareName: Map<string, State | null>
}

let cities: CompactCities | undefined
let countries: CountryIndex | undefined
let states: StateIndex | undefined

function countryIndex(): CountryIndex {
  if (countries) return countries
  const list: Country[] = []
  for (const raw of readAsset<RawCountry[]>('country')) {
    const id = countryIdOf(raw.isoCode)
    const latitude = coordinate(raw.latitude)
    const longitude = coordinate(raw.longitude)
    if (id === undefined || latitude === null || longitude === null) continue
    list.push({ id, iso: raw.isoCode, name: raw.name, latitude, longitude })
  }
  list.sort((a, b) => a.id - b.id)
  const byName = new Map<string, Country>()
  for (const c of list) if (!byName.has(foldName(c.name))) byName.set(foldName(c.name), c)
  countries = {
    list,
    byIso: new Map(list.map((c) => [c.iso, c])),
    byId: new Map(list.map((c) => [c.id, c])),
    byName,
  }
  return countries
}

function stateIndex(): StateIndex {
  if (states) return states
  const raws = readAsset<RawState[]>('state')
    .slice()
    .sort((a, b) => byCodeUnits(a.countryCode, b.countryCode) || byCodeUnits(a.isoCode, b.isoCode))
  const list: State[] = raws.map((raw, i) => ({
    id: i + 1,
    code: raw.isoCode,
    name: raw.name,
    countryIso: raw.countryCode,
    latitude: coordinate(raw.latitude),
    longitude: coordinate(raw.longitude),
  }))
  const byCode = new Map<string, State>()
  const byName = new Map<string, State>()
  const byBareName = new Map<string, State | null>()
  for (const s of list) {
    byCode.set(`${s.countryIso}|${s.code.toUpperCase()}`, s)
    const folded = foldName(s.name)
    // Two states of one country with the same name (Taiwan's Chiayi city and county): the lower id wins.
    if (!byName.has(`${s.countryIso}|${folded}`)) byName.set(`${s.countryIso}|${folded}`, s)
    const bare = withoutDesignator(folded)
    if (bare !== undefined) {
      const key = `${s.countryIso}|${bare}`
      byBareName.set(key, byBareName.has(key) && byBareName.get(key) !== s ? null : s)
    }
  }
  states = { list, byCode, byName, byBareName }
  return states
}

function cityIndex(): CompactCities {
  cities ??= new CompactCities(loadCityColumns().columns, stateIndex().byCode)
  return cities
}

export class CountryStateCityGazetteer implements Gazetteer {
  /** Builds every index now (~0.1 s with the prebuilt city index, ~1 s without), so the first request does not pay for it. */
  preload(): void {
    countryIndex()
    stateIndex()
    cityIndex()
  }

  country(codeOrId: string | number): Country | undefined {
    const index = countryIndex()
    if (typeof codeOrId === 'number') return index.byId.get(codeOrId)
    const text = codeOrId.trim()
    if (text.length === 2) return index.byIso.get(text.toUpperCase())
    return index.byName.get(foldName(text))
  }

  state(countryIso: string, nameOrCode: string): State | undefined {
    const index = stateIndex()
    const iso = countryIso.trim().toUpperCase()
    const code = nameOrCode.trim().toUpperCase()
    const byCode = index.byCode.get(`${iso}|${code}`) ??
      (code.startsWith(`${iso}-`) ? index.byCode.get(`${iso}|${code.slice(iso.length + 1)}`) : undefined)
    if (byCode) return byCode
    const folded = foldName(nameOrCode)
    if (folded === '') return undefined
    const exact = index.byName.get(`${iso}|${folded}`)
    if (exact) return exact
    const bare = withoutDesignator(folded)
    return (bare !== undefined ? index.byName.get(`${iso}|${bare}`) : undefined) ??
      index.byBareName.get(`${iso}|${bare ?? folded}`) ??
      undefined
  }

  stateById(id: number): State | undefined {
    return Number.isInteger(id) ? stateIndex().list[id - 1] : undefined
  }

  city(countryIso: string, stateCode: string | undefined, name: string): City | undefined {
    const index = cityIndex()
    const iso = countryIso.trim().toUpperCase()
    const folded = foldName(name)
    if (folded === '') return undefined
    if (stateCode === undefined) return index.uniqueInCountry(iso, folded)
    return index.firstInState(`${iso}|${stateCode.trim().toUpperCase()}`, folded)
  }

  cityById(id: number): City | undefined {
    return Number.isInteger(id) ? cityIndex().byId(id) : undefined
  }
}

let shared: CountryStateCityGazetteer | undefined

/** The process-wide instance (the data is loaded once per process either way). */
export function countryStateCityGazetteer(): CountryStateCityGazetteer {
  shared ??= new CountryStateCityGazetteer()
  return shared
}
