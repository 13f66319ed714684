import t from 'tap'
import {
  countryIdOf, countrystatecityGazetteer, CountrystatecityGazetteer,
} from '../../../src/infrastructure/geo/countrystatecity-gazetteer.js'
import { FIRST_ADDED_CITY_ID } from '../../../src/infrastructure/geo/gazetteer.js'
import { legacyIds, NEW_CITY_ID_OFFSET, NEW_STATE_ID_OFFSET } from '../../../src/infrastructure/geo/legacy-ids.js'
import { foldName } from '../../../src/shared/text.js'

const g = countrystatecityGazetteer()

t.test('loads once per process and reports its cost', async (t) => {
  const started = performance.now()
  const heapBefore = process.memoryUsage().heapUsed
  g.preload()
  const ms = performance.now() - started
  t.comment(`gazetteer load: ${ms.toFixed(0)} ms, heap +${((process.memoryUsage().heapUsed - heapBefore) / 1e6).toFixed(0)} MB`)
  // A second adapter shares the indexes instead of reading the 10 MB file again.
  const again = performance.now()
  t.equal(new CountrystatecityGazetteer().cityById(1), g.cityById(1), 'same record object')
  t.ok(performance.now() - again < 50, 'no second load')
})

t.test('ids are pinned: old ids kept, upstream ids offset (an upgrade that renumbers must fail here)', async (t) => {
  t.equal(g.country('AR')?.id, 18)
  t.equal(g.country('US')?.id, 539)
  t.equal(g.state('AR', 'X')?.id, 152)
  t.equal(g.state('US', 'CA')?.id, 4702)
  t.equal(g.state('BR', 'SP')?.id, 521)
  t.equal(g.city('AR', 'X', 'Córdoba')?.id, 1409)
  t.equal(g.city('BR', 'SP', 'São Paulo')?.id, 15544)
  t.equal(g.cityById(148038)?.name, 'Raffingora')
  t.equal(g.cityById(148039), undefined)
  t.equal(g.stateById(4963)?.countryIso, 'ZW')
  t.equal(g.stateById(4964), undefined)
  // Places the old gazetteer lacked: upstream id + offset (@countrystatecity/countries 1.0.9).
  t.match(g.state('US', 'AE'), { id: NEW_STATE_ID_OFFSET + 5815, name: 'Armed Forces Europe' })
  t.equal(g.stateById(NEW_STATE_ID_OFFSET + 5815), g.state('US', 'AE'))
})

t.test('country ids derive from the ISO letters', async (t) => {
  t.equal(countryIdOf('AA'), 1)
  t.equal(countryIdOf('ZZ'), 676)
  t.equal(countryIdOf('ar'), undefined)
  t.equal(countryIdOf('ARG'), undefined)
})

t.test('country by code (any case), by name, by id', async (t) => {
  const ar = g.country('AR')
  t.match(ar, { id: 18, iso: 'AR', name: 'Argentina', latitude: -34, longitude: -64 })
  t.equal(g.country('ar'), ar)
  t.equal(g.country(' Ar '), ar)
  t.equal(g.country('argentina'), ar)
  t.equal(g.country(18), ar)
  t.equal(g.country('ZZ'), undefined)
  t.equal(g.country('Atlantis'), undefined)
  t.equal(g.country(0), undefined)
  t.equal(g.country(1.5), undefined)
  t.equal(g.country(''), undefined)
})

t.test('state by ISO code or by name, accents, case and designators ignored', async (t) => {
  const cordoba = g.state('AR', 'X')
  t.match(cordoba, { code: 'X', name: 'Córdoba', countryIso: 'AR' })
  for (const spelling of ['Córdoba', 'Cordoba', 'CORDOBA', ' córdoba ', 'x', 'AR-X', 'ar-x', 'Córdoba Province', 'Provincia de Córdoba']) {
    t.equal(g.state('AR', spelling), cordoba, spelling)
  }
  t.equal(g.state('ar', 'cordoba'), cordoba, 'country code in any case')
  const california = g.state('US', 'CA')
  t.match(california, { code: 'CA', name: 'California', countryIso: 'US' })
  for (const spelling of ['California', 'california', 'ca', 'US-CA', 'State of California', 'California State']) {
    t.equal(g.state('US', spelling), california, spelling)
  }
  t.match(g.state('BR', 'Sao Paulo'), { code: 'SP', name: 'São Paulo' })
  // The gazetteer's name carries a designator the caller leaves out.
  t.match(g.state('SN', 'Diourbel'), { code: 'DB', name: 'Diourbel Region' })
  t.match(g.state('AE', 'Ajman Emirate'), { code: 'AJ', name: 'Ajman' }, 'and the other way round')
  t.equal(g.state('AR', 'Atlantis'), undefined)
  t.equal(g.state('AR', 'CA'), undefined, 'a code of another country')
  t.equal(g.state('ZZ', 'X'), undefined)
  t.equal(g.state('AR', '---'), undefined)
})

t.test('city by name within a state, accents and case ignored', async (t) => {
  const cordoba = g.city('AR', 'X', 'Córdoba')
  t.match(cordoba, { id: 1409, name: 'Córdoba', stateId: 152, stateCode: 'X', countryIso: 'AR' })
  t.equal(g.city('AR', 'X', 'cordoba'), cordoba)
  t.equal(g.city('ar', 'x', 'CORDOBA'), cordoba)
  t.match(g.city('BR', 'SP', 'SAO PAULO'), { name: 'São Paulo', stateCode: 'SP' })
  t.match(g.city('US', 'CA', 'los angeles'), { name: 'Los Angeles', stateCode: 'CA' })
  t.equal(g.city('AR', 'B', 'Córdoba'), undefined, 'not in that state')
  t.equal(g.city('AR', 'X', 'Villa Inexistente'), undefined)
})

t.test('city by name in the whole country: only when the name is unique there', async (t) => {
  t.equal(g.city('AR', undefined, 'cordoba')?.id, 1409)
  t.equal(g.city('CO', undefined, 'Córdoba'), undefined, 'several Córdobas in Colombia')
  t.ok(g.city('CO', 'QUI', 'Córdoba'), 'found once the state is given')
})

t.test('every record round-trips by id; names find every current one, never one kept by id only', async (t) => {
  const idsFrom = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
  const retired = new Set(legacyIds().retiredCities.map((c) => c.id))
  t.equal(retired.size, 7_340)
  let cities = 0
  for (const id of [...idsFrom(1, 148_039), ...idsFrom(NEW_CITY_ID_OFFSET + 1, NEW_CITY_ID_OFFSET + 170_000)]) {
    const city = g.cityById(id)
    if (!city) continue
    cities++
    if (city.id !== id) t.fail(`city ${id} has id ${city.id}`)
    if (city.stateId === null || g.stateById(city.stateId)?.code !== city.stateCode) t.fail(`city ${id} has a bad state`)
    const found = g.city(city.countryIso, city.stateCode ?? undefined, city.name)
    if (retired.has(id)) {
      if (found?.id === id) t.fail(`retired city ${id} ${city.name} found by name`)
    } else if (!found || foldName(found.name) !== foldName(city.name) || found.id > id) {
      t.fail(`city ${id} ${city.name} not found by name (${found?.id})`)
    }
  }
  t.equal(cities, 152_970 + 7_340, 'the new data\'s cities, and the old ones it lacks')
  t.ok(NEW_CITY_ID_OFFSET + 170_000 < FIRST_ADDED_CITY_ID, 'gazetteer ids stay below added-city ids')
  let states = 0
  let keptStates = 0
  for (const id of [...idsFrom(1, 4_964), ...idsFrom(NEW_STATE_ID_OFFSET + 1, NEW_STATE_ID_OFFSET + 7_000)]) {
    const state = g.stateById(id)
    if (!state) continue
    if (state.id !== id) t.fail(`state ${id} has id ${state.id}`)
    if (g.state(state.countryIso, state.code) === state) states++
    else keptStates++
  }
  t.equal(states, 5_308)
  t.equal(keptStates, 462)
  for (const iso of ['AR', 'BR', 'US', 'DE', 'JP', 'ZW']) t.equal(g.country(g.country(iso)!.id)?.iso, iso)
})
