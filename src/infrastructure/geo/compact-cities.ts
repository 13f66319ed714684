/**
 * The gazetteer's ~160k cities in columns instead of one object and two Map entries each: names in
 * one joined string, coordinates and state references in typed arrays, name lookups by binary
 * search over id arrays sorted by folded key. That keeps the index near 10 MB of heap where
 * objects and Maps took ~55 MB; a `City` object is made only when one is returned.
 */
import { foldName } from '../../shared/text.js'
import { type City, FIRST_ADDED_CITY_ID } from './gazetteer.js'

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

/** The given positions ordered by (prefix, folded name), code units, then by position (= by id). */
function orderBy(positions: readonly number[], prefixOf: (i: number) => string, folded: readonly string[]): Uint32Array {
  const order = positions.slice()
  order.sort((a, b) => byCodeUnits(prefixOf(a), prefixOf(b)) || byCodeUnits(folded[a]!, folded[b]!) || a - b)
  return Uint32Array.from(order)
}

/** One city as the index is built from it (./gazetteer-source.ts). */
export interface CityRow {
  id: number
  name: string
  countryIso: string
  stateCode: string
  stateId: number | null
  latitude: number
  longitude: number
  /**
   * False for a city kept only so that its id resolves (an old id the current data no longer has,
   * see ./legacy-ids.ts): names never find it.
   */
  findable: boolean
}

/** The columns ./city-index-file.ts stores: positions in id order, name lookups over findable cities. */
export function buildCityColumns(rows: readonly CityRow[]): CityColumns {
  const sorted = rows.slice().sort((a, b) => a.id - b.id)
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i]!.id
    if (!Number.isSafeInteger(id) || id < 1 || id >= FIRST_ADDED_CITY_ID) throw new Error(`gazetteer city id ${id} out of range`)
    if (i > 0 && sorted[i - 1]!.id === id) throw new Error(`gazetteer city id ${id} twice`)
  }
  const groupOf = new Map<string, number>()
  const groupCountry: string[] = []
  const groupStateCode: string[] = []
  const groupStateId: (number | null)[] = []
  const n = sorted.length
  const ids = new Uint32Array(n)
  const group = new Uint32Array(n)
  const latitude = new Float64Array(n)
  const longitude = new Float64Array(n)
  const names = new Array<string>(n)
  const foldedNames = new Array<string>(n)
  const findable: number[] = []
  sorted.forEach((row, i) => {
    const groupName = `${row.countryIso}|${row.stateCode}|${row.stateId}`
    let g = groupOf.get(groupName)
    if (g === undefined) {
      g = groupCountry.length
      groupOf.set(groupName, g)
      groupCountry.push(row.countryIso)
      groupStateCode.push(row.stateCode)
      groupStateId.push(row.stateId)
    }
    ids[i] = row.id
    group[i] = g
    latitude[i] = row.latitude
    longitude[i] = row.longitude
    names[i] = row.name
    foldedNames[i] = foldName(row.name)
    if (row.findable) findable.push(i)
  })
  const groupKey = groupKeysOf(groupCountry, groupStateCode)
  return {
    groupCountry, groupStateCode, groupStateId, ids, group, latitude, longitude,
    names: packStrings(names),
    folded: packStrings(foldedNames),
    inState: orderBy(findable, (i) => groupKey[group[i]!]!, foldedNames),
    inCountry: orderBy(findable, (i) => groupCountry[group[i]!]!, foldedNames),
  }
}

/** "AR|X": country and upper-cased state code, the state part of a lookup key. */
function groupKeysOf(groupCountry: readonly string[], groupStateCode: readonly string[]): string[] {
  return groupCountry.map((iso, g) => `${iso}|${groupStateCode[g]!.toUpperCase()}`)
}

/** Strings joined into `text`; string i ends at `ends[i]` (UTF-16 code units) and starts where i − 1 ends. */
export interface Packed { text: string, ends: Uint32Array }

/** The cities in columns, as stored in the index file. */
export interface CityColumns {
  /** Per group: one (country, state code, state id); a few thousand serve all cities. */
  groupCountry: string[]
  groupStateCode: string[]
  groupStateId: (number | null)[]
  /** Per city position; positions run in ascending id order. */
  ids: Uint32Array
  group: Uint32Array
  latitude: Float64Array
  longitude: Float64Array
  names: Packed
  folded: Packed
  /** Positions of the findable cities sorted by ("AR|X", folded name), then id. */
  inState: Uint32Array
  /** Positions of the findable cities sorted by ("AR", folded name), then id. */
  inCountry: Uint32Array
}

interface Columns extends CityColumns {
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

  constructor(columns: CityColumns) {
    this.c = { ...columns, groupKey: groupKeysOf(columns.groupCountry, columns.groupStateCode) }
  }

  get size(): number {
    return this.c.ids.length
  }

  byId(id: number): City | undefined {
    const ids = this.c.ids
    let lo = 0
    let hi = ids.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (ids[mid]! < id) lo = mid + 1
      else hi = mid
    }
    return ids[lo] === id ? this.#city(lo) : undefined
  }

  /** The id at a position, 0..size−1 in ascending order (for walking every city). */
  idAt(position: number): number | undefined {
    return this.c.ids[position]
  }

  /** The lowest-id city of that state (`"AR|X"`, code upper case) with that folded name. */
  firstInState(countryAndState: string, folded: string): City | undefined {
    const compare = (i: number) =>
      byCodeUnits(this.c.groupKey[this.c.group[i]!]!, countryAndState) || byCodeUnits(packedAt(this.c.folded, i), folded)
    const i = this.c.inState[this.#lowerBound(this.c.inState, compare)]
    return i !== undefined && compare(i) === 0 ? this.#city(i) : undefined
  }

  /** Whether any findable city of the country has that folded name. */
  anyInCountry(countryIso: string, folded: string): boolean {
    const compare = (i: number) =>
      byCodeUnits(this.c.groupCountry[this.c.group[i]!]!, countryIso) || byCodeUnits(packedAt(this.c.folded, i), folded)
    const i = this.c.inCountry[this.#lowerBound(this.c.inCountry, compare)]
    return i !== undefined && compare(i) === 0
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
      id: this.c.ids[i]!,
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
