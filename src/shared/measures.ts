/**
 * Units of package measures: tolerant parsing of what callers type, and conversion to the
 * normalized values the platform stores (spec "PackageInput": grams, centimetres, Celsius).
 *
 * Parsing and conversion factors come from js-quantities (typed, knows aliases such as
 * "pounds", "#", "inches", '"', and tells absolute temperatures from temperature differences);
 * this file only adds the spellings it lacks (upper case, dots, plurals like "kgs", degree
 * signs, Spanish/Portuguese abbreviations common on labels: "gr", "mts", "lt").
 *
 * Rounding: weight to the nearest gram (a positive weight never becomes 0 g); dimensions and
 * volumes up to the next whole cm / cm³, as carriers do (a parcel is never smaller than
 * declared); temperatures to 2 decimals.
 */
import Qty from 'js-quantities'
import { messageOf } from '../shared/thrown.js'

export const WEIGHT_UNITS = ['g', 'kg', 'mg', 'lbs'] as const
export const LENGTH_UNITS = ['cm', 'm', 'mm', 'in'] as const
export const TEMPERATURE_UNITS = ['celsius', 'fahrenheit'] as const
export const VOLUME_UNITS = ['cm3', 'm3', 'l', 'ml'] as const

export type WeightUnit = typeof WEIGHT_UNITS[number]
export type LengthUnit = typeof LENGTH_UNITS[number]
export type TemperatureUnit = typeof TEMPERATURE_UNITS[number]
export type VolumeUnit = typeof VOLUME_UNITS[number]

/** The lowest temperature each unit can express; js-quantities refuses anything colder. */
export const ABSOLUTE_ZERO: Readonly<Record<TemperatureUnit, number>> = { celsius: -273.15, fahrenheit: -459.67 }

type Unit = WeightUnit | LengthUnit | TemperatureUnit | VolumeUnit

// Canonical unit → the js-quantities unit it stands for.
const LIBRARY_UNIT: Record<Unit, string> = {
  g: 'g', kg: 'kg', mg: 'mg', lbs: 'lbs',
  cm: 'cm', m: 'm', mm: 'mm', in: 'in',
  celsius: 'tempC', fahrenheit: 'tempF',
  cm3: 'cm3', m3: 'm3', l: 'l', ml: 'ml',
}

// Spellings js-quantities does not know, after cleaning (lower case, no dots/spaces/hyphens,
// no degree sign) and after dropping a plural "s".
const EXTRA_ALIASES: Record<string, Unit> = {
  kilo: 'kg', kilogramo: 'kg', gr: 'g', gm: 'g', gramo: 'g', miligramo: 'mg', libra: 'lbs',
  mt: 'm', metro: 'm', centimetro: 'cm', milimetro: 'mm', pulgada: 'in', "''": 'in',
  c: 'celsius', tempc: 'celsius', centigrado: 'celsius', f: 'fahrenheit', tempf: 'fahrenheit',
  lt: 'l', litro: 'l', cc: 'cm3', ccm: 'cm3',
}

// What remains of a token once a "degree" word is dropped ("degC", "degree-C", "grados C").
const DEGREE_PREFIX = /^(degrees|degree|deg|grados|grado|graus|grau)(?=.)/

const TOKEN = /^[a-z#"']+(\^?[23])?$/

function clean(raw: string): string {
  return raw
    .replace(/[º˚]/gu, '°') // "º" (ordinal) would decompose to "o"
    .normalize('NFKD') // "℃" → "°C", "m³" → "m3", "″" → "′′"
    .replace(/°/gu, '')
    .replace(/[′’”]/gu, (ch) => (ch === '”' ? '"' : "'"))
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[\s._-]+/gu, '')
}

function unitsOfLibrary(units: readonly Unit[]): Map<string, Unit> {
  const map = new Map<string, Unit>()
  for (const u of units) map.set(Qty.parse(`1 ${LIBRARY_UNIT[u]}`).units(), u)
  return map
}

const WEIGHTS = unitsOfLibrary(WEIGHT_UNITS)
const LENGTHS = unitsOfLibrary(LENGTH_UNITS)
// js-quantities reads "celsius"/"fahrenheit" as temperature differences; here they are readings.
const TEMPERATURES = new Map<string, Unit>([...unitsOfLibrary(TEMPERATURE_UNITS), ['degC', 'celsius'], ['degF', 'fahrenheit']])
const VOLUMES = unitsOfLibrary(VOLUME_UNITS)

function normalize<U extends Unit>(raw: unknown, accepted: Map<string, Unit>): U | undefined {
  if (typeof raw !== 'string') return undefined
  const token = clean(raw)
  const candidates = [token, token.replace(DEGREE_PREFIX, '')]
  if (token.length > 2 && token.endsWith('s')) candidates.push(token.slice(0, -1))
  for (const candidate of candidates) {
    if (!TOKEN.test(candidate)) continue
    const alias = EXTRA_ALIASES[candidate]
    if (alias !== undefined) {
      if ([...accepted.values()].includes(alias)) return alias as U
      continue
    }
    const parsed = Qty.parse(`1 ${candidate}`) as Qty | null
    const unit = parsed ? accepted.get(parsed.units()) : undefined
    if (unit !== undefined) return unit as U
  }
  return undefined
}

/** "KG", "Kg.", "kgs", "kilograms" → "kg"; undefined when the text is no unit of weight we accept. */
export function normalizeWeightUnit(raw: unknown): WeightUnit | undefined {
  return normalize<WeightUnit>(raw, WEIGHTS)
}

/** "CM", "centimetres", "inches", '"' → canonical; undefined when not a length unit we accept. */
export function normalizeLengthUnit(raw: unknown): LengthUnit | undefined {
  return normalize<LengthUnit>(raw, LENGTHS)
}

/** "°C", "ºC", "C", "degC", "degree-C", "centigrade" → "celsius"; "°F", "F", "degF" → "fahrenheit". */
export function normalizeTemperatureUnit(raw: unknown): TemperatureUnit | undefined {
  return normalize<TemperatureUnit>(raw, TEMPERATURES)
}

/** "m3", "m³", "cm3", "cc", "l", "lt", "liters", "ml" → canonical; undefined otherwise. */
export function normalizeVolumeUnit(raw: unknown): VolumeUnit | undefined {
  return normalize<VolumeUnit>(raw, VOLUMES)
}

function convert(value: number, from: Unit, to: string): number {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
  try {
    return Qty(value, LIBRARY_UNIT[from]).to(to).scalar
  } catch (error) {
    throw new RangeError(`${value} ${from} cannot be converted: ${messageOf(error)}`)
  }
}

// Drops binary noise (0.1 m = 10.000000000000002 cm) before rounding, so 1 m ceils to 100 cm, not 101.
function denoise(x: number): number {
  return Number(x.toPrecision(12))
}

/** Integer grams, rounded half up; a positive weight is at least 1 g. */
export function toGrams(value: number, unit: WeightUnit): number {
  const grams = Math.round(denoise(convert(value, unit, 'g')))
  return value > 0 ? Math.max(grams, 1) : grams + 0
}

/** Integer centimetres, rounded up (10 in = 25.4 cm → 26). */
export function toCentimetres(value: number, unit: LengthUnit): number {
  return Math.ceil(denoise(convert(value, unit, 'cm'))) + 0
}

/** Integer cubic centimetres, rounded up. */
export function toCubicCentimetres(value: number, unit: VolumeUnit): number {
  return Math.ceil(denoise(convert(value, unit, 'cm3'))) + 0
}

/** Celsius with 2 decimals. Throws RangeError below absolute zero (see ABSOLUTE_ZERO). */
export function toCelsius(value: number, unit: TemperatureUnit): number {
  return Math.round(denoise(convert(value, unit, 'tempC') * 100)) / 100 + 0
}
