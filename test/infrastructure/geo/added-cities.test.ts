// One contract for every AddedCities adapter: in memory, and Kysely on a database of its own on
// the test PostgreSQL server (TEST_DATABASE_URL, infra/local/test.sh).
import t from 'tap'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { down, up } from '../../../src/infrastructure/database/migrations/2026-11-22T00-02-geo-added-cities.js'
import { type AddedCities, type NewCity } from '../../../src/infrastructure/geo/added-cities.js'
import { countrystatecityGazetteer } from '../../../src/infrastructure/geo/countrystatecity-gazetteer.js'
import { GazetteerGeocoder } from '../../../src/infrastructure/geo/gazetteer-geocoder.js'
import { FIRST_ADDED_CITY_ID } from '../../../src/infrastructure/geo/gazetteer.js'
import { type GeoAddedCitiesTable } from '../../../src/infrastructure/geo/geo-added-cities-table.js'
import { InMemoryAddedCities } from '../../../src/infrastructure/geo/in-memory-added-cities.js'
import { KyselyAddedCities } from '../../../src/infrastructure/geo/kysely-added-cities.js'
import { createScratchDatabase } from '../../helpers/test-database.js'

type Db = Kysely<{ geo_added_cities: GeoAddedCitiesTable }>

function newCity(over: Partial<NewCity> = {}): NewCity {
  return {
    name: 'Villa Nueva del Lago',
    normalizedName: 'villa nueva del lago',
    countryIso: 'AR',
    stateCode: 'X',
    latitude: -31.4,
    longitude: -64.2,
    ...over,
  }
}

function contract(name: string, make: () => Promise<AddedCities>): void {
  t.test(`${name}: AddedCities contract`, async (t) => {
    t.test('add records a city with an id above the gazetteer range, find and findById return it', async (t) => {
      const cities = await make()
      t.equal(await cities.find('AR', 'X', 'villa nueva del lago'), undefined)
      const added = await cities.add(newCity())
      t.ok(added.id >= FIRST_ADDED_CITY_ID, `id ${added.id}`)
      t.same(added, { id: added.id, name: 'Villa Nueva del Lago', countryIso: 'AR', stateCode: 'X', latitude: -31.4, longitude: -64.2 })
      t.same(await cities.find('AR', 'X', 'villa nueva del lago'), added)
      t.same(await cities.findById(added.id), added)
      t.equal(await cities.findById(added.id + 1000), undefined)
      t.equal(await cities.find('AR', 'S', 'villa nueva del lago'), undefined, 'another state')
      t.equal(await cities.find('AR', null, 'villa nueva del lago'), undefined, 'no state')
    })

    t.test('adding the same city again returns the first record', async (t) => {
      const cities = await make()
      const first = await cities.add(newCity())
      const again = await cities.add(newCity({ name: 'VILLA NUEVA DEL LAGO', latitude: 0, longitude: 0 }))
      t.same(again, first)
    })

    t.test('concurrent adds of one city get one id; different cities get different ids', async (t) => {
      const cities = await make()
      const same = await Promise.all(Array.from({ length: 16 }, () => cities.add(newCity({ normalizedName: 'pueblo concurrente' }))))
      t.equal(new Set(same.map((c) => c.id)).size, 1)
      const different = await Promise.all(['a', 'b', 'c'].map((n) => cities.add(newCity({ normalizedName: `pueblo ${n}` }))))
      t.equal(new Set(different.map((c) => c.id)).size, 3)
    })

    t.test('a null state is one key of its own', async (t) => {
      const cities = await make()
      const stateless = await cities.add(newCity({ stateCode: null }))
      t.same(await cities.add(newCity({ stateCode: null })), stateless)
      t.same(await cities.find('AR', null, 'villa nueva del lago'), stateless)
      const withState = await cities.add(newCity())
      t.not(withState.id, stateless.id)
    })
  })
}

contract('in memory', async () => new InMemoryAddedCities())

// One database for the file; each subtest gets an empty table through down + up.
let db: Db | undefined

async function openDb(): Promise<Db> {
  const pool = new pg.Pool({ connectionString: await createScratchDatabase(t), max: 8 })
  // The database's drop at teardown (with force) ends the idle connections: expected, not a crash.
  pool.on('error', () => undefined)
  const kysely: Db = new Kysely({ dialect: new PostgresDialect({ pool }) })
  // Registered after the database's drop, so run before it (teardowns run last first).
  t.teardown(() => kysely.destroy())
  return kysely
}

async function freshTable(): Promise<Db> {
  db ??= await openDb()
  await sql`drop table if exists geo_added_cities`.execute(db)
  await up(db)
  return db
}

contract('kysely on postgres', async () => new KyselyAddedCities(await freshTable()))

t.test('migration: ids start at 10 000 000, the key treats a null state as one value, down drops the table', async (t) => {
  const kysely = await freshTable()
  const row = { country_iso: 'AR', state_code: null, name: 'X', normalized_name: 'x', latitude: 1, longitude: 2 }
  const inserted = await kysely.insertInto('geo_added_cities').values(row).returning('id').executeTakeFirstOrThrow()
  t.equal(Number(inserted.id), 10_000_000)
  await t.rejects(kysely.insertInto('geo_added_cities').values(row).execute(), /unique|duplicate/i)
  await down(kysely)
  await t.rejects(kysely.selectFrom('geo_added_cities').selectAll().execute(), /does not exist/)
})

t.test('geocoder over the database: concurrent requests naming one new city record it once', async (t) => {
  const geo = new GazetteerGeocoder(countrystatecityGazetteer(), new KyselyAddedCities(await freshTable()))
  const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
    geo.resolveLocation({ city: i % 2 ? 'Colonia Tirolesa Nueva' : 'colonia tirolesa nueva', state: 'Córdoba', country: 'AR' })))
  const ids = new Set(results.map((r) => (r.ok ? r.city.id : -1)))
  t.equal(ids.size, 1)
  const [id] = [...ids]
  t.ok(id! >= FIRST_ADDED_CITY_ID)
  const count = await db!.selectFrom('geo_added_cities').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()
  t.equal(Number(count.n), 1)
  t.match(await geo.resolveLocation({ city_id: id! }), { ok: true, city: { id, name: /^colonia tirolesa nueva$/i }, state: { code: 'X' }, precision: 'state' })
})
