import t from 'tap'
import { chargeableGrams, priceFor, validateRates, type Rate } from '../../src/tariffs/pricing.js'

t.test('chargeable weight is the larger of real and volumetric, per package, summed', async (t) => {
  // 30×20×10 = 6000 cm³ / 5000 = 1.2 kg.
  t.equal(chargeableGrams([{ grams: 500, length: 30, width: 20, height: 10 }]), 1200, 'volumetric wins')
  t.equal(chargeableGrams([{ grams: 3000, length: 30, width: 20, height: 10 }]), 3000, 'real wins')
  // Per package: 1200 (bulky) + 3000 (heavy) = 4200, not max(3500, 1200 + 150) summed differently.
  t.equal(
    chargeableGrams([
      { grams: 500, length: 30, width: 20, height: 10 },
      { grams: 3000, length: 10, width: 10, height: 7.5 },
    ]),
    4200,
  )
  t.equal(chargeableGrams([{ grams: 500, length: 30, width: 20, height: 10 }], 6000), 1000, 'divisor honoured')
  t.equal(chargeableGrams([{ grams: 0, length: 7, width: 10, height: 10 }]), 140, 'no float noise: 700 cm³ is 140 g')
  t.equal(chargeableGrams([{ grams: 0, length: 1, width: 1, height: 1 }]), 1, 'fractions round up to a gram')
  t.equal(chargeableGrams([{ grams: 100.2, length: 1, width: 1, height: 1 }]), 101)
  t.equal(chargeableGrams([]), 0)
  t.throws(() => chargeableGrams([], 0), RangeError)
  t.throws(() => chargeableGrams([], -1), RangeError)
})

const rates: Rate[] = [
  { origin_zone: 'A', destination_zone: 'B', max_grams: 1000, price: 10, lead_time_days: 2 },
  { origin_zone: 'A', destination_zone: 'B', max_grams: 5000, price: 20, lead_time_days: 3 },
  { origin_zone: 'A', destination_zone: 'B', max_grams: 20000, price: 45, lead_time_days: 4 },
  { origin_zone: 'B', destination_zone: 'A', max_grams: 1000, price: 99, lead_time_days: 9 },
]

t.test('price is the rate of the smallest bracket holding the weight', async (t) => {
  t.same(priceFor(rates, 'A', 'B', 1), { price: 10, lead_time_days: 2 })
  t.same(priceFor(rates, 'A', 'B', 1000), { price: 10, lead_time_days: 2 }, 'max_grams is inclusive')
  t.same(priceFor(rates, 'A', 'B', 1001), { price: 20, lead_time_days: 3 })
  t.same(priceFor(rates, 'A', 'B', 20000), { price: 45, lead_time_days: 4 })
  t.equal(priceFor(rates, 'A', 'B', 20001), undefined, 'heavier than every bracket')
  t.same(priceFor([...rates].reverse(), 'A', 'B', 1001), { price: 20, lead_time_days: 3 }, 'listing order does not matter')
  t.same(priceFor(rates, 'B', 'A', 500), { price: 99, lead_time_days: 9 }, 'directional')
  t.equal(priceFor(rates, 'A', 'C', 500), undefined)
  t.equal(priceFor(rates, 'A', 'A', 500), undefined)
})

const validBody = () => ({
  zones: [
    { code: 'A', name: 'Zone A', countries: ['AR'] },
    { code: 'B', name: 'Zone B', states: ['Córdoba', 'X'], city_ids: [12], zipcodes: [{ from: '5000', to: '5999' }] },
  ],
  rates: [
    { origin_zone: 'A', destination_zone: 'B', max_grams: 1000, price: 10, lead_time_days: 2 },
    { origin_zone: 'A', destination_zone: 'B', max_grams: 5000, price: 20.5, lead_time_days: 3 },
    { origin_zone: 'B', destination_zone: 'A', max_grams: 1000, price: 0, lead_time_days: 0 },
  ],
})

t.test('a valid body has no errors', async (t) => {
  t.same(validateRates(validBody()), {})
})

t.test('unknown zones in rates are reported by dot path', async (t) => {
  const body = validBody()
  body.rates.push({ origin_zone: 'Z', destination_zone: 'A', max_grams: 1, price: 1, lead_time_days: 1 })
  body.rates[1]!.destination_zone = 'nope'
  t.same(validateRates(body), { 'rates.3.origin_zone': ['unknown zone'], 'rates.1.destination_zone': ['unknown zone'] })
})

t.test('duplicate zone codes', async (t) => {
  const body = validBody()
  body.zones.push({ code: 'A', name: 'again', countries: ['UY'] })
  t.same(validateRates(body), { 'zones.2.code': ['duplicate zone code (also zones.0.code)'] })
})

t.test('negative price and bad numbers', async (t) => {
  const body = validBody() as { zones: unknown[]; rates: Record<string, unknown>[] }
  body.rates[0]!.price = -1
  body.rates[1]!.max_grams = 0
  body.rates[2]!.lead_time_days = 1.5
  body.rates.push({ origin_zone: 'A', destination_zone: 'A', max_grams: '10', price: 'free', lead_time_days: -1 })
  t.same(validateRates(body), {
    'rates.0.price': ['must be 0 or more'],
    'rates.1.max_grams': ['must be a positive integer'],
    'rates.2.lead_time_days': ['must be an integer, 0 or more'],
    'rates.3.max_grams': ['must be a positive integer'],
    'rates.3.price': ['must be a number'],
    'rates.3.lead_time_days': ['must be an integer, 0 or more'],
  })
})

t.test('zipcode from greater than to', async (t) => {
  const body = validBody()
  body.zones[1]!.zipcodes = [{ from: '5999', to: '5000' }, { from: '999', to: '1000' }, { from: 'C1499', to: 'C1000' }]
  t.same(validateRates(body), {
    'zones.1.zipcodes.0.from': ['must not be greater than to'],
    'zones.1.zipcodes.2.from': ['must not be greater than to'],
  }, '999–1000 is numeric and therefore in order')
})

t.test('brackets of a zone pair must strictly increase', async (t) => {
  const body = validBody()
  body.rates.push({ origin_zone: 'A', destination_zone: 'B', max_grams: 3000, price: 15, lead_time_days: 2 })
  body.rates.push({ origin_zone: 'A', destination_zone: 'B', max_grams: 1000, price: 11, lead_time_days: 2 })
  body.rates.push({ origin_zone: 'B', destination_zone: 'A', max_grams: 2000, price: 1, lead_time_days: 1 })
  t.same(validateRates(body), {
    'rates.3.max_grams': ['brackets must increase: rates.1 of the same zones has 5000'],
    'rates.4.max_grams': ['duplicate bracket: rates.0 has the same zones and max_grams'],
  }, 'B→A is another pair and may reuse the weights')
})

t.test('shape errors list every failing field', async (t) => {
  t.same(validateRates(null), { zones: ['is required'], rates: ['is required'] })
  t.same(validateRates({ zones: [], rates: [] }), { zones: ['must hold at least one zone'], rates: ['must hold at least one rate'] })
  t.same(validateRates({ zones: 'x', rates: {} }), { zones: ['must be a list of zones'], rates: ['must be a list of rates'] })
  const errors = validateRates({
    zones: [
      'x',
      { code: '', name: '' },
      { code: 'C', name: 'c', countries: ['ARG'], states: [''], city_ids: [0, 'x'], zipcodes: [{ from: '' }, 'x'] },
      { code: 'D'.repeat(51), name: 'd', countries: 'AR' },
    ],
    rates: [7, { origin_zone: 'C', destination_zone: 'C', max_grams: 1, price: 1, lead_time_days: 1 }],
  })
  t.same(errors, {
    'zones.0': ['must be an object'],
    'zones.1.code': ['is required'],
    'zones.1.name': ['is required'],
    'zones.1': ['needs at least one of countries, states, city_ids or zipcodes'],
    'zones.2.countries.0': ['must be an ISO 3166-1 alpha-2 country code'],
    'zones.2.states.0': ['must be a state name or ISO code'],
    'zones.2.city_ids.0': ['must be a positive integer city id'],
    'zones.2.city_ids.1': ['must be a positive integer city id'],
    'zones.2.zipcodes.0.from': ['is required'],
    'zones.2.zipcodes.0.to': ['is required'],
    'zones.2.zipcodes.1': ['must be an object with from and to'],
    'zones.3.code': ['must be at most 50 characters'],
    'zones.3.countries': ['must be a list'],
    'zones.3': ['needs at least one of countries, states, city_ids or zipcodes'],
    'rates.0': ['must be an object'],
  })
})

t.test('numeric zipcodes are accepted as numbers', async (t) => {
  const body = validBody() as { zones: Record<string, unknown>[]; rates: unknown[] }
  body.zones[1]!.zipcodes = [{ from: 5000, to: 5999 }]
  t.same(validateRates(body), {})
})
