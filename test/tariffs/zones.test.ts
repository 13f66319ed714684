import t from 'tap'
import { compareZipcodes, matchZone, zipcodeInRange, zoneMatcher, type Zone, type ZoneLocation } from '../../src/tariffs/zones.js'

const zones: Zone[] = [
  { code: 'AR', name: 'Argentina', countries: ['AR'] },
  { code: 'CBA', name: 'Córdoba province', countries: ['AR'], states: ['Córdoba'] },
  { code: 'BA', name: 'Buenos Aires province', countries: ['AR'], states: ['B'] },
  { code: 'ROS', name: 'Rosario', city_ids: [3838] },
  { code: 'CABA', name: 'Capital', countries: ['AR'], zipcodes: [{ from: '1000', to: '1499' }, { from: 'C1000AAA', to: 'C1499ZZZ' }] },
  { code: 'UY', name: 'Uruguay', countries: ['uy'] },
]

const at = (loc: Partial<ZoneLocation>): ZoneLocation => ({ countryIso: 'AR', ...loc })

t.test('a country-only zone covers the whole country', async (t) => {
  t.equal(matchZone(zones, at({ stateCode: 'Q', stateName: 'Neuquén', zipcode: '8300' })), 'AR')
  t.equal(matchZone(zones, { countryIso: 'UY', zipcode: '11000' }), 'UY', 'country codes compare without case')
  t.equal(matchZone(zones, { countryIso: 'CL' }), undefined)
})

t.test('states match by name or ISO code, without case or accents', async (t) => {
  t.equal(matchZone(zones, at({ stateName: 'Córdoba' })), 'CBA')
  t.equal(matchZone(zones, at({ stateName: 'cordoba' })), 'CBA')
  t.equal(matchZone(zones, at({ stateName: '  CÓRDOBA ' })), 'CBA')
  t.equal(matchZone(zones, at({ stateCode: 'b' })), 'BA')
  t.equal(matchZone(zones, at({ stateCode: 'AR-B' })), 'BA', 'a full ISO 3166-2 code on the location')
  const byFullCode: Zone[] = [{ code: 'X', name: 'Córdoba', states: ['AR-X'] }]
  t.equal(matchZone(byFullCode, at({ stateCode: 'X' })), 'X', 'a full ISO 3166-2 code in the zone')
  t.equal(matchZone(byFullCode, { countryIso: 'MX', stateCode: 'X' }), undefined, 'AR-X is not MX-X')
})

t.test('countries scope the finer lists of a zone', async (t) => {
  // "B" in Uruguay is not Buenos Aires, and 1000 in Uruguay is not Capital.
  t.equal(matchZone(zones, { countryIso: 'UY', stateCode: 'B', zipcode: '1000' }), 'UY')
  t.equal(matchZone(zones, { countryIso: 'CL', stateCode: 'B', zipcode: '1000' }), undefined)
})

t.test('most specific wins: zipcode > city > state > country', async (t) => {
  // In Buenos Aires province, in Rosario's city id, and inside Capital's zipcodes: zipcode wins.
  t.equal(matchZone(zones, at({ stateCode: 'B', cityId: 3838, zipcode: '1425' })), 'CABA')
  t.equal(matchZone(zones, at({ stateCode: 'B', cityId: 3838, zipcode: '2000' })), 'ROS', 'city beats state')
  t.equal(matchZone(zones, at({ stateCode: 'B', cityId: 1, zipcode: '2000' })), 'BA', 'state beats country')
  t.equal(matchZone(zones, at({ stateCode: 'S', cityId: 1, zipcode: '2000' })), 'AR')
  // Order in the list does not matter for different levels.
  t.equal(matchZone([...zones].reverse(), at({ stateCode: 'B', cityId: 3838, zipcode: '1425' })), 'CABA')
  t.equal(matchZone([...zones].reverse(), at({ stateCode: 'B', cityId: 1 })), 'BA')
})

t.test('equal specificity: the zone listed first wins', async (t) => {
  const twins: Zone[] = [
    { code: 'FIRST', name: 'a', states: ['Córdoba'] },
    { code: 'SECOND', name: 'b', states: ['cordoba'] },
  ]
  t.equal(matchZone(twins, at({ stateName: 'Cordoba' })), 'FIRST')
  t.equal(matchZone([...twins].reverse(), at({ stateName: 'Cordoba' })), 'SECOND')
})

t.test('numeric zipcode ranges compare as numbers', async (t) => {
  t.equal(zipcodeInRange('999', { from: '1000', to: '1499' }), false, '"999" > "1000" as text, not as a number')
  t.equal(zipcodeInRange('1000', { from: '1000', to: '1499' }), true)
  t.equal(zipcodeInRange('1499', { from: '1000', to: '1499' }), true)
  t.equal(zipcodeInRange('1500', { from: '1000', to: '1499' }), false)
  t.equal(zipcodeInRange('10000', { from: '1000', to: '1499' }), false, '"10000" < "1499" as text, not as a number')
  t.equal(zipcodeInRange('01200', { from: '1000', to: '1499' }), true, 'leading zeros do not matter numerically')
  t.equal(zipcodeInRange('902-10', { from: '90000', to: '90299' }), true, 'dashes are stripped')
  t.equal(zipcodeInRange(' 9 0 3 0 0', { from: '90000', to: '90299' }), false)
  t.equal(zipcodeInRange('', { from: '0', to: '99999' }), false)
})

t.test('alphanumeric zipcodes compare as normalized text', async (t) => {
  t.equal(zipcodeInRange('C1425DKF', { from: 'C1000AAA', to: 'C1499ZZZ' }), true)
  t.equal(zipcodeInRange('c1425-dkf', { from: 'C1000AAA', to: 'C1499ZZZ' }), true, 'case and dashes ignored')
  t.equal(zipcodeInRange('C1500AAA', { from: 'C1000AAA', to: 'C1499ZZZ' }), false)
  t.equal(zipcodeInRange('SW1A 1AA', { from: 'SW1A0AA', to: 'SW1A9ZZ' }), true)
  // A letter anywhere makes the whole comparison textual: "2" sorts after "10A".
  t.equal(zipcodeInRange('2', { from: '10A', to: '30A' }), true)
  t.equal(compareZipcodes('999', '1000'), -1)
  t.equal(compareZipcodes('A999', 'A1000'), 1)
  t.equal(compareZipcodes('1-000', '1000'), 0)
})

t.test('CABA by alphanumeric CPA, and a location without a zipcode falls back', async (t) => {
  t.equal(matchZone(zones, at({ zipcode: 'C1425DKF', stateCode: 'C' })), 'CABA')
  t.equal(matchZone(zones, at({ zipcode: null, stateCode: 'B' })), 'BA')
})

t.test('a zone without countries is not scoped', async (t) => {
  t.equal(matchZone(zones, { countryIso: 'UY', cityId: 3838 }), 'ROS', 'city ids are global gazetteer ids')
})

t.test('zoneMatcher gives the same answers as matchZone', async (t) => {
  const match = zoneMatcher(zones)
  for (const loc of [at({ zipcode: '1425' }), at({ stateName: 'Córdoba' }), { countryIso: 'UY' }, { countryIso: 'BR' }]) {
    t.equal(match(loc), matchZone(zones, loc))
  }
  t.equal(matchZone([], at({})), undefined)
})
