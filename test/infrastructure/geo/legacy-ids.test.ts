import t from 'tap'
import { countrystatecityGazetteer } from '../../../src/infrastructure/geo/countrystatecity-gazetteer.js'
import { legacyIds } from '../../../src/infrastructure/geo/legacy-ids.js'
import { foldName } from '../../../src/shared/text.js'

// Ids stored before issue 14 (derived from country-state-city@3.2.1, GPL-3.0) must keep resolving
// to the same place on @countrystatecity/countries. The expected records below were read from the
// old adapter (src/infrastructure/geo/country-state-city-gazetteer.ts at commit 9931ee7) before
// it was removed.
const g = countrystatecityGazetteer()

const OLD_CITIES = [
  { id: 1409, name: 'Córdoba', stateId: 152, stateCode: 'X', countryIso: 'AR', latitude: -31.4135, longitude: -64.18105 },
  { id: 15544, name: 'São Paulo', stateId: 521, stateCode: 'SP', countryIso: 'BR', latitude: -23.5475, longitude: -46.63611 },
  { id: 139020, name: 'New York City', stateId: 4734, stateCode: 'NY', countryIso: 'US', latitude: 40.71427, longitude: -74.00597 },
  { id: 19313, name: 'Santiago', stateId: 745, stateCode: 'RM', countryIso: 'CL', latitude: -33.45694, longitude: -70.64827 },
  { id: 84498, name: 'Monterrey', stateId: 3213, stateCode: 'NLE', countryIso: 'MX', latitude: 25.67507, longitude: -100.31847 },
  { id: 1297, name: 'Ushuaia', stateId: 150, stateCode: 'V', countryIso: 'AR', latitude: -54.81084, longitude: -68.31591 },
  { id: 86123, name: 'Querétaro', stateId: 3216, stateCode: 'QUE', countryIso: 'MX', latitude: 20.72105, longitude: -100.44738 },
  { id: 19361, name: 'Viña del Mar', stateId: 747, stateCode: 'VS', countryIso: 'CL', latitude: -33.02457, longitude: -71.55183 },
  { id: 1211, name: 'Rosario', stateId: 147, stateCode: 'S', countryIso: 'AR', latitude: -32.94682, longitude: -60.63932 },
  { id: 127999, name: 'Los Angeles', stateId: 4702, stateCode: 'CA', countryIso: 'US', latitude: 34.05223, longitude: -118.24368 },
  // Ids stored by tests and fixtures (tariff zones' city_ids, the first and last ids).
  { id: 1, name: 'Canillo', stateId: 1, stateCode: '02', countryIso: 'AD', latitude: 42.5676, longitude: 1.59756 },
  { id: 12, name: 'Ajman City', stateId: 8, stateCode: 'AJ', countryIso: 'AE', latitude: 25.40177, longitude: 55.47878 },
  { id: 3838, name: 'Westendorf', stateId: 161, stateCode: '7', countryIso: 'AT', latitude: 47.43208, longitude: 12.21406 },
  { id: 148038, name: 'Raffingora', stateId: 4963, stateCode: 'MW', countryIso: 'ZW', latitude: -17.03333, longitude: 30.43333 },
]

const OLD_STATES = [
  { id: 152, code: 'X', name: 'Córdoba', countryIso: 'AR', latitude: -31.3992876, longitude: -64.2643842 },
  { id: 521, code: 'SP', name: 'São Paulo', countryIso: 'BR', latitude: -23.5505199, longitude: -46.6333094 },
  { id: 4734, code: 'NY', name: 'New York', countryIso: 'US', latitude: 40.7127753, longitude: -74.0059728 },
  { id: 745, code: 'RM', name: 'Región Metropolitana de Santiago', countryIso: 'CL', latitude: -33.4375545, longitude: -70.6504896 },
  { id: 3213, code: 'NLE', name: 'Nuevo León', countryIso: 'MX', latitude: 25.592172, longitude: -99.9961947 },
  { id: 1, code: '02', name: 'Canillo', countryIso: 'AD', latitude: 42.5978249, longitude: 1.6566377 },
  { id: 4963, code: 'MW', name: 'Mashonaland West Province', countryIso: 'ZW', latitude: -17.4851029, longitude: 29.7889248 },
]

/** Great-circle distance in km. */
function km(a: { latitude: number | null, longitude: number | null }, b: { latitude: number | null, longitude: number | null }): number {
  const r = Math.PI / 180
  const [la1, lo1, la2, lo2] = [a.latitude!, a.longitude!, b.latitude!, b.longitude!]
  const h = Math.sin((la2 - la1) * r / 2) ** 2 + Math.cos(la1 * r) * Math.cos(la2 * r) * Math.sin((lo2 - lo1) * r / 2) ** 2
  return 12742 * Math.asin(Math.sqrt(h))
}

t.test('old city ids resolve to the same city: name, state, country, coordinates', async (t) => {
  const retired = new Set(legacyIds().retiredCities.map((c) => c.id))
  for (const old of OLD_CITIES) {
    t.same(g.cityById(old.id), old, `${old.id} ${old.name}`)
    // Ajman City (12) is one the new data lacks: by id only.
    const byName = g.city(old.countryIso, old.stateCode, old.name)?.id
    t.equal(byName, retired.has(old.id) ? undefined : old.id, `${old.name}: its name finds its old id unless retired`)
  }
  t.same(OLD_CITIES.filter((c) => retired.has(c.id)).map((c) => c.id), [12])
})

t.test('old state ids resolve to the same state; names and codes find the old id', async (t) => {
  for (const old of OLD_STATES) {
    const state = g.stateById(old.id)
    t.match(state, { id: old.id, code: old.code, countryIso: old.countryIso }, `${old.id} ${old.name}`)
    t.equal(g.state(old.countryIso, old.code), state, `${old.code}: found by code`)
    // Upstream moved some state centres since 3.2.1 (Nuevo León's by ~70 km) and dropped
    // "Province" from a few names; the state is the same.
    t.ok(km(state!, old) < 100, `${old.name}: centre within 100 km (${km(state!, old).toFixed(1)})`)
    t.equal(g.state(old.countryIso, old.name), state, `${old.name}: the old name still finds it`)
  }
})

t.test('a state whose ISO code changed is still found by its old code', async (t) => {
  const mexicoCity = g.state('MX', 'CMX')
  t.match(mexicoCity, { id: 3199, code: 'CMX', formerCodes: ['CDMX'] })
  t.equal(g.state('MX', 'CDMX'), mexicoCity)
  t.equal(g.state('MX', 'mx-cdmx'), mexicoCity)
  t.equal(g.state('IN', 'UT')?.code, 'UK', 'Uttarakhand, was IN-UT')
  t.equal(g.state('IN', 'UT'), g.state('IN', 'Uttarakhand'))
})

t.test('a city the new data renamed keeps its id, state and point', async (t) => {
  t.same(g.cityById(79541), { id: 79541, name: 'Mexico City', stateId: 3199, stateCode: 'CMX', countryIso: 'MX', latitude: 19.42847, longitude: -99.12766 },
    'was "Ciudad de México" (state code "CDMX")')
  t.equal(g.city('MX', 'CMX', 'mexico city')?.id, 79541)
  t.equal(g.city('MX', 'CMX', 'Ciudad de Mexico')?.id, 79541, 'the old name is still accepted')
  t.equal(g.city('MX', undefined, 'ciudad de méxico')?.id, 79541, 'in the whole country too')
  t.equal(legacyIds().aliases.length, 1845)
})

t.test('an own name wins over another city\'s old name', async (t) => {
  const ids = legacyIds()
  let checked = 0
  for (const alias of ids.aliases.filter((_, i) => i % 37 === 0)) {
    const city = g.cityById(alias.id)!
    const found = g.city(city.countryIso, city.stateCode!, alias.name)
    t.ok(found, `${alias.name}: found`)
    if (found && found.id !== alias.id) t.equal(foldName(found.name), foldName(alias.name), `${alias.name}: a city with that own name`)
    checked++
  }
  t.ok(checked > 40)
})

t.test('an old city the new data lacks still resolves by id, but names no longer find it', async (t) => {
  // US counties were listed as cities in 3.2.1.
  t.same(g.cityById(126567), { id: 126567, name: 'Autauga County', stateId: 4698, stateCode: 'AL', countryIso: 'US', latitude: 32.53492, longitude: -86.64276 })
  t.equal(g.city('US', 'AL', 'Autauga County'), undefined)
  const ids = legacyIds()
  t.equal(ids.from, 'country-state-city@3.2.1')
  t.equal(ids.to, '@countrystatecity/countries@1.0.9')
  t.equal(ids.retiredCities.length, 7340)
  t.equal(ids.retiredStates.length, 462)
  let checked = 0
  for (const { id, name, stateId, countryIso, latitude, longitude } of ids.retiredCities.filter((_, i) => i % 97 === 0)) {
    t.match(g.cityById(id), { id, name, stateId, countryIso, latitude, longitude }, `${id} ${name}`)
    checked++
  }
  t.ok(checked > 70)
})
