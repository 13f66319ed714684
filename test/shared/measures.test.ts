import t, { type Test } from 'tap'
import {
  ABSOLUTE_ZERO, normalizeLengthUnit, normalizeTemperatureUnit, normalizeVolumeUnit, normalizeWeightUnit,
  toCelsius, toCentimetres, toCubicCentimetres, toGrams,
} from '../../src/shared/measures.js'

function expectAll<U>(t: Test, normalize: (raw: unknown) => U | undefined, expected: U, spellings: string[]): void {
  for (const s of spellings) t.equal(normalize(s), expected, JSON.stringify(s))
}

t.test('weight units: every spelling maps to the canonical unit', async (t) => {
  expectAll(t, normalizeWeightUnit, 'kg', ['kg', 'KG', 'Kg', 'Kg.', 'kgs', 'KGS', 'kg.', ' kg ', 'kilogram', 'kilograms', 'Kilograms', 'kilo', 'kilos', 'kilogramos'])
  expectAll(t, normalizeWeightUnit, 'g', ['g', 'G', 'g.', 'gr', 'GR', 'gr.', 'grs', 'gram', 'grams', 'gramme', 'gm', 'gms', 'gramos'])
  expectAll(t, normalizeWeightUnit, 'mg', ['mg', 'MG', 'mg.', 'mgs', 'milligram', 'milligrams', 'miligramos'])
  expectAll(t, normalizeWeightUnit, 'lbs', ['lbs', 'LBS', 'lb', 'LB', 'lb.', 'Lbs.', 'pound', 'pounds', 'Pounds', '#', 'libras'])
})

t.test('length units: every spelling maps to the canonical unit', async (t) => {
  expectAll(t, normalizeLengthUnit, 'cm', ['cm', 'CM', 'Cm.', 'cms', 'centimeter', 'centimeters', 'centimetre', 'centimetres', 'centímetros'])
  expectAll(t, normalizeLengthUnit, 'mm', ['mm', 'MM', 'mm.', 'millimeter', 'millimetres', 'milímetros'])
  expectAll(t, normalizeLengthUnit, 'm', ['m', 'M', 'm.', 'meter', 'meters', 'metre', 'metres', 'mts', 'mt', 'metros'])
  expectAll(t, normalizeLengthUnit, 'in', ['in', 'IN', 'in.', 'inch', 'inches', 'Inches', '"', '”', '″', "''", 'pulgadas'])
})

t.test('temperature units: every spelling maps to the canonical unit', async (t) => {
  expectAll(t, normalizeTemperatureUnit, 'celsius', ['celsius', 'Celsius', 'CELSIUS', '°C', 'ºC', '° C', '℃', 'C', 'c', 'degC', 'deg C', 'degree-C', 'degrees Celsius', 'centigrade', 'tempC', 'temp-C', 'grados C'])
  expectAll(t, normalizeTemperatureUnit, 'fahrenheit', ['fahrenheit', 'Fahrenheit', '°F', 'ºF', '℉', 'F', 'f', 'degF', 'deg. F', 'degree-F', 'degrees fahrenheit', 'tempF'])
})

t.test('volume units: every spelling maps to the canonical unit', async (t) => {
  expectAll(t, normalizeVolumeUnit, 'm3', ['m3', 'M3', 'm³', 'm^3'])
  expectAll(t, normalizeVolumeUnit, 'cm3', ['cm3', 'CM3', 'cm³', 'cc', 'ccm'])
  expectAll(t, normalizeVolumeUnit, 'l', ['l', 'L', 'lt', 'LT', 'lts', 'liter', 'liters', 'litre', 'litres', 'litros'])
  expectAll(t, normalizeVolumeUnit, 'ml', ['ml', 'mL', 'ML', 'milliliter', 'millilitres'])
})

t.test('unknown or other-kind units are undefined, so the caller can name the field', async (t) => {
  for (const bad of ['', ' ', 'oz', 'ton', 'stone', 'kgm', 'kg*m', 'kg^2', '2kg', 'x', 'deg', 'km', 'ft', 'lt', 'C', '°']) {
    t.equal(normalizeWeightUnit(bad), undefined, `weight ${JSON.stringify(bad)}`)
  }
  for (const bad of ['', 'kg', 'km', 'ft', 'yd', 'mi', 'C', 'm3', 'in2', 'mtr2']) t.equal(normalizeLengthUnit(bad), undefined, `length ${bad}`)
  for (const bad of ['', 'K', 'kelvin', 'degR', 'deg', 'cm', 'c2']) t.equal(normalizeTemperatureUnit(bad), undefined, `temperature ${bad}`)
  for (const bad of ['', 'm', 'kg', 'gal', 'ft3']) t.equal(normalizeVolumeUnit(bad), undefined, `volume ${bad}`)
  t.equal(normalizeWeightUnit(undefined), undefined)
  t.equal(normalizeWeightUnit(12), undefined)
})

t.test('weights become integer grams, rounded half up, a positive weight at least 1 g', async (t) => {
  t.equal(toGrams(1, 'lbs'), 454)
  t.equal(toGrams(2.2, 'lbs'), 998)
  t.equal(toGrams(1, 'kg'), 1000)
  t.equal(toGrams(1.2345, 'kg'), 1235)
  t.equal(toGrams(0.0025, 'kg'), 3)
  t.equal(toGrams(1500, 'mg'), 2)
  t.equal(toGrams(1499, 'mg'), 1)
  t.equal(toGrams(100, 'mg'), 1)
  t.equal(toGrams(250, 'g'), 250)
  t.equal(toGrams(0, 'kg'), 0)
  t.ok(Object.is(toGrams(0, 'kg'), 0))
})

t.test('dimensions become integer centimetres, rounded up', async (t) => {
  t.equal(toCentimetres(10, 'in'), 26)
  t.equal(toCentimetres(1, 'in'), 3)
  t.equal(toCentimetres(1, 'm'), 100)
  t.equal(toCentimetres(0.1, 'm'), 10)
  t.equal(toCentimetres(1.234, 'm'), 124)
  t.equal(toCentimetres(155, 'mm'), 16)
  t.equal(toCentimetres(150, 'mm'), 15)
  t.equal(toCentimetres(30, 'cm'), 30)
  t.equal(toCentimetres(30.2, 'cm'), 31)
  t.equal(toCentimetres(0, 'cm'), 0)
})

t.test('volumes become integer cubic centimetres, rounded up', async (t) => {
  t.equal(toCubicCentimetres(1, 'm3'), 1_000_000)
  t.equal(toCubicCentimetres(0.5, 'l'), 500)
  t.equal(toCubicCentimetres(2, 'ml'), 2)
  t.equal(toCubicCentimetres(1.5, 'cm3'), 2)
})

t.test('temperatures become Celsius with 2 decimals', async (t) => {
  t.equal(toCelsius(212, 'fahrenheit'), 100)
  t.equal(toCelsius(32, 'fahrenheit'), 0)
  t.ok(Object.is(toCelsius(32, 'fahrenheit'), 0), 'no negative zero')
  t.equal(toCelsius(-40, 'fahrenheit'), -40)
  t.equal(toCelsius(98.6, 'fahrenheit'), 37)
  t.equal(toCelsius(0, 'fahrenheit'), -17.78)
  t.equal(toCelsius(-4.5, 'celsius'), -4.5)
  t.equal(toCelsius(8.123, 'celsius'), 8.12)
  t.equal(toCelsius(ABSOLUTE_ZERO.fahrenheit, 'fahrenheit'), ABSOLUTE_ZERO.celsius)
})

t.test('impossible values throw RangeError', async (t) => {
  t.throws(() => toCelsius(-300, 'celsius'), RangeError)
  t.throws(() => toCelsius(-500, 'fahrenheit'), RangeError)
  t.throws(() => toGrams(Number.NaN, 'kg'), RangeError)
  t.throws(() => toCentimetres(Number.POSITIVE_INFINITY, 'm'), RangeError)
})
