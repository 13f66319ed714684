/**
 * Gazetteer adapter over the offline data of `@countrystatecity/countries` (pinned 1.0.9; the dr5hn
 * countries-states-cities database, ODbL-1.0).
 *
 * Ids (./legacy-ids.ts):
 * - Country id: from the two ISO letters, (first − 'A') × 26 + (second − 'A') + 1, so 1..676
 *   ("AR" = 18, "US" = 539). Stable forever, whatever the package adds or removes.
 * - State and city ids: the ids of the former gazetteer (country-state-city 3.2.1) for the places
 *   it had, through a frozen mapping, so ids already stored keep resolving to the same place;
 *   upstream id + an offset for places it lacked. Old places the data no longer has still resolve
 *   by id, never by name.
 *
 * Everything comes from the prebuilt index of ./city-index-cache.ts (built from the ~4,300 JSON
 * files of the package when missing), read on first use, once per process: countries and states
 * in Maps, the ~160k cities in the compact columns of ./compact-cities.ts.
 */
import { foldName } from '../../shared/text.js'
import { loadCityColumns } from './city-index-cache.js'
import { CompactCities } from './compact-cities.js'
import type { City, Country, Gazetteer, State } from './gazetteer.js'
import type { GazetteerColumns } from './gazetteer-columns.js'

export { countryIdOf } from './gazetteer-source.js'

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
  byId: Map<number, State>
  byCode: Map<string, State>
  /** Codes the state had before ("MX|CDMX"), where no state has them now. */
  byFormerCode: Map<string, State>
  byName: Map<string, State>
  /** Names without their designator; null where two states of a country would collide. */
  byBareName: Map<string, State | null>
}

interface AliasIndex {
  /** "AR|X|folded" → city id. */
  inState: Map<string, number>
  /** "AR|folded" → city id, null where two cities of the country share the alias. */
  inCountry: Map<string, number | null>
}

let data: GazetteerColumns | undefined
let cities: CompactCities | undefined
let aliases: AliasIndex | undefined
let countries: CountryIndex | undefined
let states: StateIndex | undefined

function loaded(): GazetteerColumns {
  data ??= loadCityColumns().columns
  return data
}

function countryIndex(): CountryIndex {
  if (countries) return countries
  const list = loaded().countries
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
  const byId = new Map<number, State>()
  const byCode = new Map<string, State>()
  const byName = new Map<string, State>()
  const byBareName = new Map<string, State | null>()
  // Ascending id: where two states share a key, the lower id wins.
  for (const { findable, ...s } of loaded().states) {
    byId.set(s.id, s)
    if (!findable) continue
    if (!byCode.has(`${s.countryIso}|${s.code.toUpperCase()}`)) byCode.set(`${s.countryIso}|${s.code.toUpperCase()}`, s)
    const folded = foldName(s.name)
    // Two states of one country with the same name (Taiwan's Chiayi city and county): the lower id wins.
    if (!byName.has(`${s.countryIso}|${folded}`)) byName.set(`${s.countryIso}|${folded}`, s)
    const bare = withoutDesignator(folded)
    if (bare !== undefined) {
      const key = `${s.countryIso}|${bare}`
      byBareName.set(key, byBareName.has(key) && byBareName.get(key) !== s ? null : s)
    }
  }
  const byFormerCode = new Map<string, State>()
  for (const s of byId.values()) {
    for (const former of s.formerCodes ?? []) {
      const key = `${s.countryIso}|${former.toUpperCase()}`
      if (!byCode.has(key) && !byFormerCode.has(key)) byFormerCode.set(key, s)
    }
  }
  states = { byId, byCode, byFormerCode, byName, byBareName }
  return states
}

function cityIndex(): CompactCities {
  cities ??= new CompactCities(loaded().cities)
  return cities
}

function aliasIndex(): AliasIndex {
  if (aliases) return aliases
  const inState = new Map<string, number>()
  const inCountry = new Map<string, number | null>()
  for (const alias of loaded().cityAliases) {
    const city = cityIndex().byId(alias.id)
    if (!city) continue
    const folded = foldName(alias.name)
    const stateKey = `${city.countryIso}|${(city.stateCode ?? '').toUpperCase()}|${folded}`
    if (!inState.has(stateKey)) inState.set(stateKey, city.id)
    const countryKey = `${city.countryIso}|${folded}`
    inCountry.set(countryKey, inCountry.has(countryKey) && inCountry.get(countryKey) !== city.id ? null : city.id)
  }
  aliases = { inState, inCountry }
  return aliases
}

export class CountrystatecityGazetteer implements Gazetteer {
  /** Builds every index now (~0.1 s with the prebuilt index, a few seconds without), so the first request does not pay for it. */
  preload(): void {
    countryIndex()
    stateIndex()
    cityIndex()
    aliasIndex()
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
    const unprefixed = code.startsWith(`${iso}-`) ? code.slice(iso.length + 1) : code
    const byCode = index.byCode.get(`${iso}|${code}`) ?? index.byCode.get(`${iso}|${unprefixed}`) ??
      index.byFormerCode.get(`${iso}|${code}`) ?? index.byFormerCode.get(`${iso}|${unprefixed}`)
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
    return Number.isInteger(id) ? stateIndex().byId.get(id) : undefined
  }

  city(countryIso: string, stateCode: string | undefined, name: string): City | undefined {
    const index = cityIndex()
    const iso = countryIso.trim().toUpperCase()
    const folded = foldName(name)
    if (folded === '') return undefined
    // A city's own name first; an old name of a renamed city only when no city has it as its own.
    const code = stateCode?.trim().toUpperCase()
    if (code === undefined) {
      if (index.anyInCountry(iso, folded)) return index.uniqueInCountry(iso, folded)
      const alias = aliasIndex().inCountry.get(`${iso}|${folded}`)
      return alias === undefined || alias === null ? undefined : index.byId(alias)
    }
    const own = index.firstInState(`${iso}|${code}`, folded)
    if (own) return own
    const alias = aliasIndex().inState.get(`${iso}|${code}|${folded}`)
    return alias === undefined ? undefined : index.byId(alias)
  }

  cityById(id: number): City | undefined {
    return Number.isInteger(id) ? cityIndex().byId(id) : undefined
  }
}

let shared: CountrystatecityGazetteer | undefined

/** The process-wide instance (the data is loaded once per process either way). */
export function countrystatecityGazetteer(): CountrystatecityGazetteer {
  shared ??= new CountrystatecityGazetteer()
  return shared
}
