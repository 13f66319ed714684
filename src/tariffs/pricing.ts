import { compareZipcodes, type Zone } from './zones.js'

/** Tariff maths (DESIGN §3.5): chargeable weight, bracket lookup, and the rates body's rules. */

export interface PackageMeasures {
  grams: number
  /** Centimetres. */
  length: number
  width: number
  height: number
}

export interface Rate {
  origin_zone: string
  destination_zone: string
  max_grams: number
  price: number
  lead_time_days: number
}

export interface TariffRates {
  zones: Zone[]
  rates: Rate[]
}

export type FieldErrors = Record<string, string[]>

export const DEFAULT_VOLUMETRIC_DIVISOR = 5000

/**
 * Chargeable grams of a shipment. Each package is charged at the larger of its real weight and
 * its volumetric weight (cm³ / divisor kg), rounded up to a whole gram, and the packages are
 * summed, as carriers bill a multi-piece shipment: a light bulky box cannot hide inside a heavy
 * small one's margin.
 */
export function chargeableGrams(packages: readonly PackageMeasures[], divisor: number = DEFAULT_VOLUMETRIC_DIVISOR): number {
  if (!(divisor > 0) || !Number.isFinite(divisor)) throw new RangeError('volumetric divisor must be a positive number')
  let total = 0
  for (const p of packages) {
    // Multiply before dividing, and forgive float noise, so 6000 cm³ / 5000 is 1200 g, not 1201.
    const volumetric = (p.length * p.width * p.height * 1000) / divisor
    const grams = Math.max(p.grams, volumetric)
    total += Math.ceil(grams - 1e-9)
  }
  return total
}

/**
 * The rate of the smallest weight bracket (`max_grams`, inclusive) holding `grams` for the
 * ordered zone pair; undefined when the pair has no rate or the weight exceeds every bracket.
 * Rates are directional: A→B says nothing about B→A.
 */
export function priceFor(
  rates: readonly Rate[],
  originZone: string,
  destZone: string,
  grams: number,
): { price: number; lead_time_days: number } | undefined {
  let best: Rate | undefined
  for (const rate of rates) {
    if (rate.origin_zone !== originZone || rate.destination_zone !== destZone) continue
    if (rate.max_grams < grams) continue
    if (!best || rate.max_grams < best.max_grams) best = rate
  }
  return best ? { price: best.price, lead_time_days: best.lead_time_days } : undefined
}

export const ZONE_CODE_MAX = 50
export const ZONE_NAME_MAX = 100

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isText = (v: unknown): v is string => typeof v === 'string' && v.trim() !== ''
const isZipcode = (v: unknown): v is string | number =>
  isText(v) || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)

/**
 * Every rule of a `PUT /tariffs/{id}/rates` body, as dot-path errors from the body root
 * (`rates.3.origin_zone`, `zones.1.code`); empty when the body is valid. Brackets of one zone
 * pair must be listed by strictly increasing `max_grams`.
 */
export function validateRates(body: unknown): FieldErrors {
  const errors: FieldErrors = {}
  const add = (path: string, message: string) => {
    ;(errors[path] ??= []).push(message)
  }
  if (!isObject(body)) {
    add('zones', 'is required')
    add('rates', 'is required')
    return errors
  }

  const codes = new Map<string, number>()
  if (!Array.isArray(body.zones)) add('zones', 'must be a list of zones')
  else if (body.zones.length === 0) add('zones', 'must hold at least one zone')
  else body.zones.forEach((zone, i) => validateZone(zone, `zones.${i}`, i, codes, add))

  if (!Array.isArray(body.rates)) add('rates', 'must be a list of rates')
  else if (body.rates.length === 0) add('rates', 'must hold at least one rate')
  else validateRateList(body.rates, codes, add)

  return errors
}

type Add = (path: string, message: string) => void

function validateZone(zone: unknown, at: string, index: number, codes: Map<string, number>, add: Add): void {
  if (!isObject(zone)) {
    add(at, 'must be an object')
    return
  }
  if (!isText(zone.code)) add(`${at}.code`, 'is required')
  else if (zone.code.length > ZONE_CODE_MAX) add(`${at}.code`, `must be at most ${ZONE_CODE_MAX} characters`)
  else if (codes.has(zone.code)) add(`${at}.code`, `duplicate zone code (also zones.${codes.get(zone.code)}.code)`)
  else codes.set(zone.code, index)

  if (!isText(zone.name)) add(`${at}.name`, 'is required')
  else if (zone.name.length > ZONE_NAME_MAX) add(`${at}.name`, `must be at most ${ZONE_NAME_MAX} characters`)

  let criteria = 0
  const list = (key: string, check: (item: unknown, path: string) => void) => {
    const value = zone[key]
    if (value === undefined || value === null) return
    if (!Array.isArray(value)) {
      add(`${at}.${key}`, 'must be a list')
      return
    }
    criteria += value.length
    value.forEach((item, k) => check(item, `${at}.${key}.${k}`))
  }
  list('countries', (c, path) => {
    if (typeof c !== 'string' || !/^[A-Za-z]{2}$/.test(c.trim())) add(path, 'must be an ISO 3166-1 alpha-2 country code')
  })
  list('states', (s, path) => {
    if (!isText(s)) add(path, 'must be a state name or ISO code')
  })
  list('city_ids', (c, path) => {
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c <= 0) add(path, 'must be a positive integer city id')
  })
  list('zipcodes', (r, path) => {
    if (!isObject(r)) {
      add(path, 'must be an object with from and to')
      return
    }
    const fromOk = isZipcode(r.from)
    const toOk = isZipcode(r.to)
    if (!fromOk) add(`${path}.from`, 'is required')
    if (!toOk) add(`${path}.to`, 'is required')
    if (fromOk && toOk && compareZipcodes(r.from as string | number, r.to as string | number) > 0) {
      add(`${path}.from`, 'must not be greater than to')
    }
  })
  if (criteria === 0) add(at, 'needs at least one of countries, states, city_ids or zipcodes')
}

function validateRateList(rates: unknown[], codes: Map<string, number>, add: Add): void {
  // Per ordered zone pair: the last bracket seen and every max_grams already used.
  const pairs = new Map<string, { last: number; lastIndex: number; seen: Map<number, number> }>()
  rates.forEach((rate, i) => {
    const at = `rates.${i}`
    if (!isObject(rate)) {
      add(at, 'must be an object')
      return
    }
    for (const key of ['origin_zone', 'destination_zone'] as const) {
      const value = rate[key]
      if (!isText(value)) add(`${at}.${key}`, 'is required')
      else if (!codes.has(value)) add(`${at}.${key}`, 'unknown zone')
    }
    const grams = rate.max_grams
    const gramsOk = typeof grams === 'number' && Number.isSafeInteger(grams) && grams > 0
    if (!gramsOk) add(`${at}.max_grams`, 'must be a positive integer')
    const price = rate.price
    if (typeof price !== 'number' || !Number.isFinite(price)) add(`${at}.price`, 'must be a number')
    else if (price < 0) add(`${at}.price`, 'must be 0 or more')
    const days = rate.lead_time_days
    if (typeof days !== 'number' || !Number.isSafeInteger(days) || days < 0) {
      add(`${at}.lead_time_days`, 'must be an integer, 0 or more')
    }

    if (!gramsOk || !isText(rate.origin_zone) || !isText(rate.destination_zone)) return
    const key = JSON.stringify([rate.origin_zone, rate.destination_zone])
    const pair = pairs.get(key)
    if (!pair) {
      pairs.set(key, { last: grams, lastIndex: i, seen: new Map([[grams, i]]) })
      return
    }
    const twin = pair.seen.get(grams)
    if (twin !== undefined) {
      add(`${at}.max_grams`, `duplicate bracket: rates.${twin} has the same zones and max_grams`)
    } else if (grams < pair.last) {
      add(`${at}.max_grams`, `brackets must increase: rates.${pair.lastIndex} of the same zones has ${pair.last}`)
    }
    pair.seen.set(grams, pair.seen.get(grams) ?? i)
    if (grams > pair.last) {
      pair.last = grams
      pair.lastIndex = i
    }
  })
}
