/**
 * Tariff zones (DESIGN §3.5) and where a location falls.
 *
 * A zone lists any of `countries`, `states`, `city_ids`, `zipcodes`:
 * - `countries` alone covers those whole countries;
 * - with finer lists, `countries` only scopes them ("zipcodes 1000–1499 in AR"), because state
 *   codes and zipcodes repeat between countries;
 * - the finer lists add up: a location in any listed state, city or zipcode range is in the zone.
 * When several zones hold a location the most specific match wins:
 * zipcode range > city > state > country. Equal specificity: the zone listed first wins.
 */

export interface ZipcodeRange {
  from: string
  to: string
}

export interface Zone {
  code: string
  name: string
  countries?: string[]
  /** State names or ISO 3166-2 codes, bare (`B`) or with the country (`AR-B`). */
  states?: string[]
  city_ids?: number[]
  zipcodes?: ZipcodeRange[]
}

export interface ZoneLocation {
  countryIso: string
  stateCode?: string | null
  stateName?: string | null
  cityId?: number | null
  zipcode?: string | null
}

export const MATCH_LEVEL = { country: 1, state: 2, city: 3, zipcode: 4 } as const

/** Case-, accent- and spacing-insensitive form of a name ("  Córdoba " = "cordoba"). */
export function foldName(value: string): string {
  return value.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim()
}

/** Zipcodes are compared without spaces or dashes and without regard to case. */
export function normalizeZipcode(value: string | number): string {
  return String(value).replace(/[\s-]+/g, '').toUpperCase()
}

const ALL_DIGITS = /^\d+$/

/**
 * Orders two zipcodes: numerically when both are all digits (so "999" < "1000"), otherwise
 * lexicographically on the normalized text (Argentine CPA "C1425DKF", UK "SW1A 1AA").
 */
export function compareZipcodes(a: string | number, b: string | number): number {
  const x = normalizeZipcode(a)
  const y = normalizeZipcode(b)
  if (ALL_DIGITS.test(x) && ALL_DIGITS.test(y)) {
    const bx = BigInt(x)
    const by = BigInt(y)
    return bx < by ? -1 : bx > by ? 1 : 0
  }
  return x < y ? -1 : x > y ? 1 : 0
}

/**
 * Whether a zipcode lies in a range. The numeric order applies only when the value and both
 * ends are all digits; any letter anywhere makes all three comparisons lexicographic, so a range
 * never mixes the two orders.
 */
export function zipcodeInRange(zipcode: string | number, range: { from: string | number; to: string | number }): boolean {
  const value = normalizeZipcode(zipcode)
  const from = normalizeZipcode(range.from)
  const to = normalizeZipcode(range.to)
  if (value === '') return false
  if (ALL_DIGITS.test(value) && ALL_DIGITS.test(from) && ALL_DIGITS.test(to)) {
    const v = BigInt(value)
    return BigInt(from) <= v && v <= BigInt(to)
  }
  return from <= value && value <= to
}

interface CompiledZone {
  code: string
  countries: Set<string> | undefined
  states: Set<string>
  cities: Set<number>
  zipcodes: ZipcodeRange[]
  finer: boolean
}

function compile(zone: Zone): CompiledZone {
  const countries = zone.countries?.length ? new Set(zone.countries.map((c) => c.trim().toUpperCase())) : undefined
  const states = new Set((zone.states ?? []).map(foldName))
  const cities = new Set(zone.city_ids ?? [])
  const zipcodes = zone.zipcodes ?? []
  return { code: zone.code, countries, states, cities, zipcodes, finer: states.size + cities.size + zipcodes.length > 0 }
}

function levelOf(zone: CompiledZone, loc: ZoneLocation): number {
  const country = loc.countryIso.trim().toUpperCase()
  if (zone.countries && !zone.countries.has(country)) return 0
  if (!zone.finer) return zone.countries ? MATCH_LEVEL.country : 0
  if (loc.zipcode != null && loc.zipcode !== '' && zone.zipcodes.some((r) => zipcodeInRange(loc.zipcode!, r))) {
    return MATCH_LEVEL.zipcode
  }
  if (loc.cityId != null && zone.cities.has(loc.cityId)) return MATCH_LEVEL.city
  if (zone.states.size > 0) {
    const names: string[] = []
    if (loc.stateCode) {
      const code = loc.stateCode.trim()
      const bare = code.toUpperCase().startsWith(`${country}-`) ? code.slice(country.length + 1) : code
      names.push(bare, `${country}-${bare}`)
    }
    if (loc.stateName) names.push(loc.stateName)
    if (names.some((n) => zone.states.has(foldName(n)))) return MATCH_LEVEL.state
  }
  return 0
}

/** Prepares zones once for many lookups (a quote matches origin and destination). */
export function zoneMatcher(zones: readonly Zone[]): (loc: ZoneLocation) => string | undefined {
  const compiled = zones.map(compile)
  return (loc) => {
    let best: string | undefined
    let bestLevel = 0
    for (const zone of compiled) {
      const level = levelOf(zone, loc)
      if (level > bestLevel) {
        best = zone.code
        bestLevel = level
        if (level === MATCH_LEVEL.zipcode) break
      }
    }
    return best
  }
}

/** Code of the most specific zone holding the location, or undefined when none does. */
export function matchZone(zones: readonly Zone[], location: ZoneLocation): string | undefined {
  return zoneMatcher(zones)(location)
}
