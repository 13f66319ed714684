import t from 'tap'
import { countrystatecityGazetteer } from '../../../src/infrastructure/geo/countrystatecity-gazetteer.js'
import { GazetteerGeocoder } from '../../../src/infrastructure/geo/gazetteer-geocoder.js'
import { FIRST_ADDED_CITY_ID } from '../../../src/infrastructure/geo/gazetteer.js'
import { type LocationResult, type ResolvedLocation } from '../../../src/infrastructure/geo/geocoder.js'
import { InMemoryAddedCities } from '../../../src/infrastructure/geo/in-memory-added-cities.js'

const gazetteer = countrystatecityGazetteer()
const newGeocoder = () => new GazetteerGeocoder(gazetteer, new InMemoryAddedCities())

function located(result: LocationResult): ResolvedLocation {
  if (!result.ok) throw new Error(`expected a location, got ${JSON.stringify(result.errors)}`)
  return result
}

t.test('known cities by name: accents, case, state by name or ISO code', async (t) => {
  const geo = newGeocoder()
  const cordoba = located(await geo.resolveLocation({ city: 'cordoba', state: 'CORDOBA', country: 'ar' }))
  t.same(cordoba, {
    ok: true,
    city: { id: 1409, name: 'Córdoba' },
    state: { id: 152, code: 'X', name: 'Córdoba' },
    country: { id: 18, iso: 'AR', name: 'Argentina' },
    latitude: -31.4135,
    longitude: -64.18105,
    precision: 'city',
  })
  t.same(await geo.resolveLocation({ city: 'Córdoba', state: 'X', country: 'AR' }), cordoba)
  t.same(await geo.resolveLocation({ city: 'CÓRDOBA', state: 'Provincia de Córdoba', country: 'AR' }), cordoba)

  const saoPaulo = located(await geo.resolveLocation({ city: 'Sao Paulo', state: 'Sao Paulo', country: 'BR' }))
  t.match(saoPaulo, { city: { name: 'São Paulo' }, state: { code: 'SP', name: 'São Paulo' }, country: { iso: 'BR' }, precision: 'city' })
  t.same(await geo.resolveLocation({ city: 'SÃO PAULO', state: 'SP', country: 'br' }), saoPaulo)

  const byCode = located(await geo.resolveLocation({ city: 'Los Angeles', state: 'CA', country: 'US' }))
  const byName = located(await geo.resolveLocation({ city: 'los angeles', state: 'California', country: 'US' }))
  t.same(byCode, byName)
  t.match(byCode, { state: { code: 'CA', name: 'California' }, precision: 'city' })
})

t.test('ids round-trip: a resolved city, by its ids, resolves to the same location', async (t) => {
  const geo = newGeocoder()
  const first = located(await geo.resolveLocation({ city: 'Córdoba', state: 'Córdoba', country: 'AR' }))
  t.same(await geo.resolveLocation({ city_id: first.city.id }), first)
  t.same(await geo.resolveLocation({ city_id: first.city.id, state_id: first.state!.id, country_id: first.country.id }), first)
  t.same(await geo.resolveLocation({ city: 'Córdoba', state_id: first.state!.id }), first, 'country implied by state_id')
  t.same(await geo.resolveLocation({ city: 'Córdoba', state: 'X', country_id: first.country.id }), first)
})

t.test('an unknown city of a known state is recorded once, at the state centre', async (t) => {
  const geo = newGeocoder()
  const state = gazetteer.state('AR', 'X')!
  const added = located(await geo.resolveLocation({ city: '  Villa   Tulumba Nueva ', state: 'Córdoba', country: 'AR' }))
  t.ok(added.city.id >= FIRST_ADDED_CITY_ID)
  t.match(added, {
    city: { name: 'Villa Tulumba Nueva' },
    state: { id: state.id, code: 'X' },
    country: { iso: 'AR' },
    latitude: state.latitude,
    longitude: state.longitude,
    precision: 'state',
  })
  t.same(await geo.resolveLocation({ city: 'VILLA TULUMBA NUEVA', state: 'x', country: 'ar' }), added, 'same city, other spelling')
  t.same(await geo.resolveLocation({ city_id: added.city.id }), added, 'its id resolves')
  const other = located(await geo.resolveLocation({ city: 'Villa Tulumba Nueva', state: 'Santa Fe', country: 'AR' }))
  t.not(other.city.id, added.city.id, 'same name in another state is another city')
})

t.test('concurrent requests naming one new city get one id', async (t) => {
  const geo = newGeocoder()
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    geo.resolveLocation({ city: i % 2 ? 'Pueblo Nuevo del Sur' : 'pueblo nuevo del sur', state: 'Córdoba', country: 'AR' })))
  t.equal(new Set(results.map((r) => located(r).city.id)).size, 1)
})

t.test('a state the gazetteer does not know is accepted', async (t) => {
  const geo = newGeocoder()
  // The city's name is unique in the country, so it is found and brings its real state.
  t.match(await geo.resolveLocation({ city: 'Córdoba', state: 'Capital Federal', country: 'AR' }), {
    city: { id: 1409 }, state: { code: 'X' }, precision: 'city',
  })
  // An unknown city with an unknown state falls back to the country's centre, with no state.
  const ar = gazetteer.country('AR')!
  const lost = located(await geo.resolveLocation({ city: 'Paraje El Olvido', state: 'Atlantis', country: 'AR' }))
  t.ok(lost.city.id >= FIRST_ADDED_CITY_ID)
  t.same({ state: lost.state, latitude: lost.latitude, longitude: lost.longitude, precision: lost.precision },
    { state: null, latitude: ar.latitude, longitude: ar.longitude, precision: 'country' })
  t.same(await geo.resolveLocation({ city: 'paraje el olvido', country: 'AR' }), lost, 'same record without any state')
  t.same(await geo.resolveLocation({ city_id: lost.city.id }), lost)
})

t.test('a city name shared by several cities of the country needs the state', async (t) => {
  const geo = newGeocoder()
  const co = gazetteer.country('CO')!
  t.match(await geo.resolveLocation({ city: 'Córdoba', country: 'CO' }), {
    ok: true, state: null, precision: 'country', latitude: co.latitude, longitude: co.longitude,
  })
  t.match(await geo.resolveLocation({ city: 'Córdoba', state: 'Quindío', country: 'CO' }), {
    ok: true, state: { code: 'QUI' }, precision: 'city',
  })
})

t.test('a new city of a state without coordinates falls back to the country centre', async (t) => {
  const bare = gazetteer.state('US', 'AE')
  t.match(bare, { name: 'Armed Forces Europe', latitude: null }, 'the pinned data has states without a centre')
  const country = gazetteer.country(bare!.countryIso)!
  const result = located(await newGeocoder().resolveLocation({ city: 'Nowhere Junction', state: bare!.code, country: bare!.countryIso }))
  t.match(result, { state: { id: bare!.id }, latitude: country.latitude, longitude: country.longitude, precision: 'country' })
})

t.test('errors are keyed by the input field and all listed', async (t) => {
  const geo = newGeocoder()
  t.same(await geo.resolveLocation({ city: 'Córdoba', country: 'ZZ' }),
    { ok: false, errors: { country: ['is not a known ISO 3166-1 alpha-2 country code'] } })
  t.same(await geo.resolveLocation({ city_id: 9_999_999 }), { ok: false, errors: { city_id: ['does not exist'] } })
  t.same(await geo.resolveLocation({ city_id: FIRST_ADDED_CITY_ID + 123 }), { ok: false, errors: { city_id: ['does not exist'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba', state_id: 999_999 }),
    { ok: false, errors: { state_id: ['does not exist'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba', country_id: 677 }), { ok: false, errors: { country_id: ['does not exist'] } })
  t.same(await geo.resolveLocation({ country: 'AR' }), { ok: false, errors: { city: ['is required'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba' }), { ok: false, errors: { country: ['is required'] } })
  t.same(await geo.resolveLocation({}), { ok: false, errors: { country: ['is required'], city: ['is required'] } })
  t.same(await geo.resolveLocation({ city: null, state: '', country: '  ' }), { ok: false, errors: { country: ['is required'], city: ['is required'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba', country: 'ZZ', state_id: 999_999 }),
    { ok: false, errors: { state_id: ['does not exist'], country: ['is not a known ISO 3166-1 alpha-2 country code'] } })
  t.same(await geo.resolveLocation({ city: 'x'.repeat(101), country: 'AR' }),
    { ok: false, errors: { city: ['is too long (maximum 100 characters)'] } })
  t.same(await geo.resolveLocation({ city: '...', country: 'AR' }), { ok: false, errors: { city: ['must contain letters or digits'] } })
  t.same(await geo.resolveLocation({ city_id: 0 }), { ok: false, errors: { city_id: ['must be a positive integer'] } })
  t.same(await geo.resolveLocation({ city_id: '1409' as unknown as number }), { ok: false, errors: { city_id: ['must be a positive integer'] } })
})

t.test('ids and codes that disagree are errors', async (t) => {
  const geo = newGeocoder()
  const cordoba = gazetteer.city('AR', 'X', 'Córdoba')!
  const us = gazetteer.country('US')!
  const california = gazetteer.state('US', 'CA')!
  t.same(await geo.resolveLocation({ city_id: cordoba.id, country_id: us.id }),
    { ok: false, errors: { country_id: ['does not match city_id'] } })
  t.same(await geo.resolveLocation({ city_id: cordoba.id, state_id: california.id }),
    { ok: false, errors: { state_id: ['does not match city_id'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba', state_id: california.id, country: 'AR' }),
    { ok: false, errors: { state_id: ['is not a state of country AR'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba', state_id: california.id, country_id: 18 }),
    { ok: false, errors: { state_id: ['is not a state of country AR'] } })
  t.same(await geo.resolveLocation({ city: 'Córdoba', country: 'US', country_id: 18 }),
    { ok: false, errors: { country: ['does not match country_id'] } })
  // With city_id the name fields are not read.
  t.match(await geo.resolveLocation({ city_id: cordoba.id, city: 'Springfield', country: 'ZZ' }), { ok: true, city: { id: cordoba.id } })
})

t.test('a town recorded under a state code that has since changed is found again, not recorded twice', async (t) => {
  // country-state-city 3.2.1 coded Mexico City "CDMX"; the gazetteer now says "CMX".
  const added = new InMemoryAddedCities()
  const before = await added.add({ name: 'Barrio Viejo', normalizedName: 'barrio viejo', countryIso: 'MX', stateCode: 'CDMX', latitude: 19.43, longitude: -99.13 })
  const geo = new GazetteerGeocoder(gazetteer, added)
  for (const state of ['Ciudad de México', 'CMX', 'CDMX', 'MX-CDMX']) {
    const again = located(await geo.resolveLocation({ city: 'barrio viejo', state, country: 'MX' }))
    t.match(again, { city: { id: before.id, name: 'Barrio Viejo' }, state: { id: 3199, code: 'CMX' } }, state)
  }
  t.match(located(await geo.resolveLocation({ city_id: before.id })), { state: { id: 3199, code: 'CMX' } }, 'by id, with its state')
})
