import type { MeasureSnapshot, PackageSnapshot } from '../../schemas/events/shipments.js'
import { MAX_CM, MAX_GRAMS } from '../../schemas/api/shipments.js'
import type { ErrorBag } from './errors.js'
import { normalizeCurrency } from './currency.js'
import {
  ABSOLUTE_ZERO, normalizeLengthUnit, normalizeTemperatureUnit, normalizeWeightUnit, toCelsius, toCentimetres, toGrams,
} from './measures.js'

/**
 * PackageInput (spec): each measure either normalized (`grams`, `length`… in cm, `temperature_*`
 * in Celsius) or as `original_*` + `*_unit` in any spelling the measures module understands; the
 * snapshot keeps the normalized value, the original and the canonical unit. Checks look at a
 * field only when its type is right, so they merge with the schema's errors.
 */

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const has = (v: unknown): boolean => v !== undefined && v !== null
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

/** Label codes go into Code 128 barcodes: printable ASCII only. */
export const LABEL_CODE = /^[\x20-\x7E]{1,20}$/

/** A conversion the units library refuses (denormal or astronomically large numbers) is the caller's error, not a 500. */
function safely(fn: () => number): number | null {
  try {
    const v = fn()
    return Number.isFinite(v) ? v : null
  } catch {
    return null
  }
}

export interface PackageDraft extends Omit<PackageSnapshot, 'id' | 'ulid' | 'label_code'> { label_code: string | null }

function measure(
  p: Obj, path: string, bag: ErrorBag, name: 'length' | 'width' | 'height',
): MeasureSnapshot | null {
  const value = p[name]; const original = p[`original_${name}`]; const unitRaw = p[`${name}_unit`]
  if (has(original)) {
    if (!has(unitRaw)) { bag.add(`${path}.${name}_unit`, `The ${name} unit field is required when original ${name} is present.`); return null }
    const unit = normalizeLengthUnit(unitRaw)
    if (!unit) { bag.add(`${path}.${name}_unit`, `The ${name} unit is invalid; use cm, m, mm or in.`); return null }
    if (!finite(original) || original <= 0) return null // the schema reported it
    const cm = safely(() => toCentimetres(original, unit))
    if (cm === null || cm < 1) { bag.add(`${path}.original_${name}`, `The original ${name} must convert to at least 1 cm.`); return null }
    if (cm > MAX_CM) { bag.add(`${path}.original_${name}`, `The ${name} may not be greater than ${MAX_CM} cm.`); return null }
    if (has(value) && value !== cm) bag.add(`${path}.${name}`, `The ${name} does not match original ${name} (${cm} cm).`)
    return { value: cm, original_value: original, unit }
  }
  if (has(unitRaw) && !has(value)) bag.add(`${path}.original_${name}`, `The original ${name} field is required when ${name} unit is present.`)
  if (!has(value)) {
    if (!has(unitRaw)) bag.add(`${path}.${name}`, `The ${name} field is required when id is not present.`)
    return null
  }
  if (!Number.isInteger(value)) return null
  return { value: value as number, original_value: null, unit: 'cm' }
}

function weight(p: Obj, path: string, bag: ErrorBag): MeasureSnapshot | null {
  const grams = p.grams; const original = p.original_weight; const unitRaw = p.weight_unit
  if (has(original)) {
    if (!has(unitRaw)) { bag.add(`${path}.weight_unit`, 'The weight unit field is required when original weight is present.'); return null }
    const unit = normalizeWeightUnit(unitRaw)
    if (!unit) { bag.add(`${path}.weight_unit`, 'The weight unit is invalid; use g, kg, mg or lbs.'); return null }
    if (!finite(original) || original <= 0) return null
    const g = safely(() => toGrams(original, unit))
    if (g === null || g < 1) { bag.add(`${path}.original_weight`, 'The original weight must convert to at least 1 g.'); return null }
    if (g > MAX_GRAMS) { bag.add(`${path}.original_weight`, `The weight may not be greater than ${MAX_GRAMS} g.`); return null }
    if (has(grams) && grams !== g) bag.add(`${path}.grams`, `The grams do not match original weight (${g} g).`)
    return { value: g, original_value: original, unit }
  }
  if (has(unitRaw) && !has(grams)) bag.add(`${path}.original_weight`, 'The original weight field is required when weight unit is present.')
  if (!has(grams)) {
    if (!has(unitRaw)) bag.add(`${path}.grams`, 'The grams field is required when original weight is not present.')
    return null
  }
  if (!Number.isInteger(grams)) return null
  return { value: grams as number, original_value: null, unit: 'g' }
}

function temperature(p: Obj, path: string, bag: ErrorBag, name: 'temperature_min' | 'temperature_max'): MeasureSnapshot | null {
  const value = p[name]; const original = p[`original_${name}`]; const unitRaw = p[`${name}_unit`]
  if (has(original)) {
    if (!has(unitRaw)) { bag.add(`${path}.${name}_unit`, `The ${name.replace('_', ' ')} unit field is required when original ${name.replace('_', ' ')} is present.`); return null }
    const unit = normalizeTemperatureUnit(unitRaw)
    if (!unit) { bag.add(`${path}.${name}_unit`, 'The temperature unit is invalid; use celsius or fahrenheit.'); return null }
    if (!finite(original)) return null
    if (original < ABSOLUTE_ZERO[unit]) { bag.add(`${path}.original_${name}`, 'The temperature may not be below absolute zero.'); return null }
    const c = safely(() => toCelsius(original, unit))
    if (c === null || c > 1000) { bag.add(`${path}.original_${name}`, 'The temperature may not be greater than 1000 °C.'); return null }
    return { value: c, original_value: original, unit }
  }
  if (has(unitRaw) && !has(value)) bag.add(`${path}.original_${name}`, `The original ${name.replace('_', ' ')} field is required when its unit is present.`)
  if (!finite(value)) return null
  return { value, original_value: null, unit: 'celsius' }
}

/** A new package's fields (no `id`); null when it cannot be built (errors are in the bag). */
export function draftPackage(raw: unknown, path: string, bag: ErrorBag, defaultCurrency: string): PackageDraft | null {
  if (!isObj(raw)) return null
  const before = Object.keys(bag.errors).length
  const length = measure(raw, path, bag, 'length')
  const width = measure(raw, path, bag, 'width')
  const height = measure(raw, path, bag, 'height')
  const w = weight(raw, path, bag)
  const tmin = temperature(raw, path, bag, 'temperature_min')
  const tmax = temperature(raw, path, bag, 'temperature_max')
  if (tmin && tmax && tmin.value > tmax.value) bag.add(`${path}.temperature_max`, 'The temperature max must be greater than or equal to temperature min.')
  const label = raw.label_code
  if (typeof label === 'string' && label !== '' && !LABEL_CODE.test(label)) {
    bag.add(`${path}.label_code`, 'The label code may only contain printable ASCII characters (it is printed as a Code 128 barcode).')
  }
  let currency: string | null = defaultCurrency
  if (typeof raw.declared_value_currency === 'string' && raw.declared_value_currency.trim() !== '') {
    currency = normalizeCurrency(raw.declared_value_currency) ?? null
    if (!currency) bag.add(`${path}.declared_value_currency`, 'The declared value currency must be an ISO 4217 code.')
  }
  if (Object.keys(bag.errors).length !== before || !length || !width || !height || !w) return null
  const amount = raw.declared_value_amount
  return {
    reused: false,
    label_code: typeof label === 'string' && label !== '' ? label : null,
    external_reference: str(raw.external_reference), description: str(raw.description),
    weight: w, length, width, height, temperature_min: tmin, temperature_max: tmax,
    is_flammable: raw.is_flammable === true, is_corrosive: raw.is_corrosive === true, is_fragile: raw.is_fragile === true,
    classification: str(raw.classification), un_code: str(raw.un_code),
    declared_value_amount: finite(amount) ? amount : 0, declared_value_currency: currency,
  }
}
