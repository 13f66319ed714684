/**
 * The gazetteer's ~150k cities in columns instead of one object and two Map entries each: names in
 * one joined string, coordinates and state references in typed arrays, name lookups by binary
 * search over id arrays sorted by folded key. That keeps the index near 10 MB of heap where
 * objects and Maps took ~55 MB; a `City` object is made only when one is returned.
 */
import { foldName } from '../../shared/text.js'
import { type City, FIRST_ADDED_CITY_ID, type State } from './gazetteer.js'

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Joins strings into one, with the end offset of each: far smaller than an array of strings. */
function packStrings(parts: readonly string[]): { text: string, ends: Uint32Array } {
  const ends = new Uint32Array(parts.length)
  let end = 0
  for (let i = 0; i < parts.length; i++) ends[i] = end += parts[i]!.length
  return { text: parts.join(''), ends }
}

/** Positions 0..n−1 ordered by (prefix, folded name), code units, then by position. */
function orderBy(prefixOf: (i: number) => string, folded: readonly string[]): Uint32Array {
  const order = Array.from({ length: folded.length }, (_, i) => i)
  order.sort((a, b) => byCodeUnits(prefixOf(a), prefixOf(b)) || byCodeUnits(folded[a]!, folded[b]!) || a - b)
  return Uint32Array.from(order)
}

// One city of city.json: ["name","CC","SC","lat","lon"]. Fields with escapes go through JSON.parse.
const FIELD = '"((?:[^"\\\\]|\\\\.)*)"'
const ROW = `\\[${FIELD},${FIELD},${FIELD},${FIELD},${FIELD}\\](,|\\]$)`

const unescape = (field: string): string => (field.includes('\\') ? JSON.parse(`"${field}"`) as string : field)

/**
 * Calls `row` for each city of city.json's text, in file order. Scanning the text row by row
 * instead of JSON.parse avoids holding 150k arrays and 750k strings at once, which set the
 * process's peak RSS.
 */
function eachCity(json: string, row: (name: string, countryIso: string, stateCode: string, lat: number, lon: number) => void): void {
  const text = json.trim()
  if (text === '[]') return
  const rows = new RegExp(ROW, 'y')
  rows.lastIndex = 1
  for (;;) {
    const at = rows.lastIndex
    const m = text.startsWith('[') ? rows.exec(text) : null
    if (m === null) throw new Error(`city.json: expected [name, country, state, latitude, longitude] at offset ${at}`)
    row(unescape(m[1]!), unescape(m[2]!), unescape(m[3]!), Number(unescape(m[4]!)), Number(unescape(m[5]!)))
    if (m[6] === ']') return
  }
}

/**
 * The columns of city.json's cities, which ./city-index-file.ts stores. Ids are 1-based positions
 * after sorting by (country, state code, name, latitude, longitude), comparing code units.
 * `json` is the text of country-state-city's city.json.
 */
export function buildCityColumns(json: string): CityColumns {
  const groupOf = new Map<string, number>()
  const groupCountry: string[] = []
  const groupStateCode: string[] = []
  const rawGroup: number[] = []
  const rawName: string[] = []
  const rawLat: number[] = []
  const rawLon: number[] = []
  eachCity(json, (name, countryIso, stateCode, lat, lon) => {
    const groupName = `${countryIso}|${stateCode}`
    let g = groupOf.get(groupName)
    if (g === undefined) {
      g = groupCountry.length
      groupOf.set(groupName, g)
      groupCountry.push(countryIso)
      groupStateCode.push(stateCode)
    }
    rawGroup.push(g)
    rawName.push(name)
    rawLat.push(lat)
    rawLon.push(lon)
  })
  const n = rawName.length
  if (n >= FIRST_ADDED_CITY_ID) throw new Error('gazetteer city ids would reach the ids of added cities')
  const groupRank = new Uint32Array(groupCountry.length)
  Array.from({ length: groupCountry.length }, (_, g) => g)
    .sort((a, b) => byCodeUnits(groupCountry[a]!, groupCountry[b]!) || byCodeUnits(groupStateCode[a]!, groupStateCode[b]!))
    .forEach((g, rank) => { groupRank[g] = rank })
  const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
    groupRank[rawGroup[a]!]! - groupRank[rawGroup[b]!]! || byCodeUnits(rawName[a]!, rawName[b]!) ||
    rawLat[a]! - rawLat[b]! || rawLon[a]! - rawLon[b]!)

  const groupKey = groupKeysOf(groupCountry, groupStateCode)
  const group = new Uint32Array(n)
  const latitude = new Float64Array(n)
  const longitude = new Float64Array(n)
  const names = new Array<string>(n)
  const foldedNames = new Array<string>(n)
  for (let i = 0; i < n; i++) {
    const at = sorted[i]!
    group[i] = rawGroup[at]!
    latitude[i] = rawLat[at]!
    longitude[i] = rawLon[at]!
    const name = rawName[at]!
    names[i] = name
    foldedNames[i] = foldName(name)
  }
  return {
    groupCountry, groupStateCode, group, latitude, longitude,
    names: packStrings(names),
    folded: packStrings(foldedNames),
    inState: orderBy((i) => groupKey[group[i]!]!, foldedNames),
    inCountry: orderBy((i) => groupCountry[group[i]!]!, foldedNames),
  }
}

/** "AR|X": country and upper-cased state code, the state part of a lookup key. */
function groupKeysOf(groupCountry: readonly string[], groupStateCode: readonly string[]): string[] {
  return groupCountry.map((iso, g) => `${iso}|${groupStateCode[g]!.toUpperCase()}`)
}

/** Strings joined into `text`; string i ends at `ends[i]` (UTF-16 code units) and starts where i − 1 ends. */
export interface Packed { text: string, ends: Uint32Array }

/** Everything about the cities that comes from city.json alone. */
export interface CityColumns {
  /** Per group: one (country, state code as written) pair; a few thousand serve all cities. */
  groupCountry: string[]
  groupStateCode: string[]
  /** Per city, by id − 1. */
  group: Uint32Array
  latitude: Float64Array
  longitude: Float64Array
  names: Packed
  folded: Packed
  /** City positions sorted by ("AR|X", folded name), then id. */
  inState: Uint32Array
  /** City positions sorted by ("AR", folded name), then id. */
  inCountry: Uint32Array
}

interface Columns extends CityColumns {
  /** Per group, derived from the state index (state.json). */
  groupStateId: (number | null)[]
  groupKey: string[]
}

export function packedAt(packed: Packed, i: number): string {
  return packed.text.slice(i === 0 ? 0 : packed.ends[i - 1]!, packed.ends[i]!)
}

export class CompactCities {
  // Callers may compare returned records by identity (a second lookup gives the same object), so
  // a record is reused while anyone still holds it, and left to the collector afterwards.
  readonly #made = new Map<number, WeakRef<City>>()
  readonly #forget = new FinalizationRegistry<number>((i) => {
    if (this.#made.get(i)?.deref() === undefined) this.#made.delete(i)
  })

  private readonly c: Columns

  constructor(columns: CityColumns, stateByCode: ReadonlyMap<string, State>) {
    const groupKey = groupKeysOf(columns.groupCountry, columns.groupStateCode)
    this.c = { ...columns, groupKey, groupStateId: groupKey.map((key) => stateByCode.get(key)?.id ?? null) }
  }

  byId(id: number): City | undefined {
    return id >= 1 && id <= this.c.group.length ? this.#city(id - 1) : undefined
  }

  /** The lowest-id city of that state (`"AR|X"`, code upper case) with that folded name. */
  firstInState(countryAndState: string, folded: string): City | undefined {
    const compare = (i: number) =>
      byCodeUnits(this.c.groupKey[this.c.group[i]!]!, countryAndState) || byCodeUnits(packedAt(this.c.folded, i), folded)
    const i = this.c.inState[this.#lowerBound(this.c.inState, compare)]
    return i !== undefined && compare(i) === 0 ? this.#city(i) : undefined
  }

  /** The city of the country with that folded name, undefined when none or several. */
  uniqueInCountry(countryIso: string, folded: string): City | undefined {
    const compare = (i: number) =>
      byCodeUnits(this.c.groupCountry[this.c.group[i]!]!, countryIso) || byCodeUnits(packedAt(this.c.folded, i), folded)
    const at = this.#lowerBound(this.c.inCountry, compare)
    const i = this.c.inCountry[at]
    if (i === undefined || compare(i) !== 0) return undefined
    const next = this.c.inCountry[at + 1]
    return next !== undefined && compare(next) === 0 ? undefined : this.#city(i)
  }

  /** First position in `order` whose city does not compare below the key. */
  #lowerBound(order: Uint32Array, compare: (i: number) => number): number {
    let lo = 0
    let hi = order.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compare(order[mid]!) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  #city(i: number): City {
    const known = this.#made.get(i)?.deref()
    if (known) return known
    const g = this.c.group[i]!
    const record: City = {
      id: i + 1,
      name: packedAt(this.c.names, i),
      stateId: this.c.groupStateId[g]!,
      stateCode: this.c.groupStateCode[g]!,
      countryIso: this.c.groupCountry[g]!,
      latitude: this.c.latitude[i]!,
      longitude: this.c.longitude[i]!,
    }
    this.#made.set(i, new WeakRef(record))
    this.#forget.register(record, i)
    return record
  }
}
