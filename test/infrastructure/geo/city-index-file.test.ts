import t, { type Test } from 'tap'
import { CITY_INDEX_FORMAT, decodeCityIndex, encodeCityIndex } from '../../../src/infrastructure/geo/city-index-file.js'
import { buildCityColumns, type CityRow, CompactCities } from '../../../src/infrastructure/geo/compact-cities.js'
import type { GazetteerColumns } from '../../../src/infrastructure/geo/gazetteer-columns.js'
import { readGazetteerSource } from '../../../src/infrastructure/geo/gazetteer-source.js'
import { foldName } from '../../../src/shared/text.js'

const KEY = 'test-key'
const fresh = readGazetteerSource()
const file = encodeCityIndex(fresh, KEY)

const bytes = (a: Float64Array | Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

function sameColumns(t: Test, actual: GazetteerColumns | undefined, expected: GazetteerColumns): void {
  if (!actual) {
    t.fail('no columns')
    return
  }
  t.same(actual.countries, expected.countries, 'countries')
  t.same(actual.states, expected.states, 'states')
  t.same(actual.cityAliases, expected.cityAliases, 'city aliases')
  const [a, e] = [actual.cities, expected.cities]
  t.same(a.groupCountry, e.groupCountry, 'group countries')
  t.same(a.groupStateCode, e.groupStateCode, 'group state codes')
  t.same(a.groupStateId, e.groupStateId, 'group state ids')
  t.ok(a.names.text === e.names.text, 'names text')
  t.ok(a.folded.text === e.folded.text, 'folded text')
  for (const name of ['latitude', 'longitude', 'ids', 'group', 'inState', 'inCountry'] as const) {
    t.ok(bytes(a[name]).equals(bytes(e[name])), name)
  }
  t.ok(bytes(a.names.ends).equals(bytes(e.names.ends)), 'names ends')
  t.ok(bytes(a.folded.ends).equals(bytes(e.folded.ends)), 'folded ends')
}

const row = (id: number, name: string, countryIso: string, stateCode: string, findable = true): CityRow =>
  ({ id, name, countryIso, stateCode, stateId: id % 7, latitude: id / 3, longitude: -id / 7, findable })
const small = (rows: CityRow[]): GazetteerColumns => ({
  countries: [{ id: 18, iso: 'AR', name: 'Argentina', latitude: -34, longitude: -64 }],
  states: [{ id: 3, code: 'X', name: 'Córdoba', countryIso: 'AR', latitude: null, longitude: null, findable: false }],
  cities: buildCityColumns(rows),
  cityAliases: [{ id: 5, name: 'Zurich Stadt' }],
})

t.test('the file gives back exactly the gazetteer it was made from', async (t) => {
  t.comment(`${(file.length / 1e6).toFixed(1)} MB for ${fresh.cities.ids.length} cities, ${fresh.states.length} states`)
  sameColumns(t, decodeCityIndex(file, KEY), fresh)
  t.equal(file.toString('latin1', 0, 8), 'SPCITIDX')
  t.equal(file.readUInt32LE(8), CITY_INDEX_FORMAT)
  t.ok(encodeCityIndex(fresh, KEY).equals(file), 'the same gazetteer always makes the same bytes')
})

t.test('the index loaded from the file answers like the freshly built one', async (t) => {
  const built = new CompactCities(fresh.cities)
  const loaded = new CompactCities(decodeCityIndex(file, KEY)!.cities)
  // Ids of the old gazetteer kept (./legacy-ids.ts), accents, and names several cities share.
  t.match(loaded.firstInState('AR|X', foldName('Córdoba')), { id: 1409, name: 'Córdoba', stateId: 152, stateCode: 'X', countryIso: 'AR' })
  t.match(loaded.firstInState('BR|SP', foldName('SAO PAULO')), { id: 15544, name: 'São Paulo' })
  t.equal(loaded.byId(148038)?.name, 'Raffingora')
  t.equal(loaded.byId(148039), undefined, 'between the old ids and the offset ones')
  t.equal(loaded.uniqueInCountry('AR', 'cordoba')?.id, 1409)
  t.equal(loaded.uniqueInCountry('CO', 'cordoba'), undefined, 'several Córdobas in Colombia')
  t.ok(loaded.firstInState('CO|QUI', 'cordoba'))
  let compared = 0
  for (let position = 0; position < built.size; position += 37) {
    const id = built.idAt(position)!
    const a = built.byId(id)!
    const b = loaded.byId(id)!
    if (JSON.stringify(a) !== JSON.stringify(b)) t.fail(`city ${id}: ${JSON.stringify(b)} ≠ ${JSON.stringify(a)}`)
    const folded = foldName(a.name)
    const key = `${a.countryIso}|${(a.stateCode ?? '').toUpperCase()}`
    if (built.firstInState(key, folded)?.id !== loaded.firstInState(key, folded)?.id) t.fail(`city ${id}: lookup in state differs`)
    if (built.uniqueInCountry(a.countryIso, folded)?.id !== loaded.uniqueInCountry(a.countryIso, folded)?.id) t.fail(`city ${id}: lookup in country differs`)
    compared++
  }
  t.ok(compared > 4000, `${compared} cities compared`)
})

t.test('small indexes round-trip too: non-Latin names, cities kept by id only, none at all', async (t) => {
  const columns = small([row(5, 'Zürich', 'CH', 'ZH'), row(2, 'Qu"oted', 'AR', 'X', false), row(1_000_009, '東京', 'JP', '13'), row(7, 'Ōsaka', 'JP', '27')])
  const decoded = decodeCityIndex(encodeCityIndex(columns, KEY), KEY)
  sameColumns(t, decoded, columns)
  const cities = new CompactCities(decoded!.cities)
  t.same([0, 1, 2, 3].map((p) => cities.idAt(p)), [2, 5, 7, 1_000_009], 'positions in id order')
  t.match(cities.byId(2), { name: 'Qu"oted', stateCode: 'X', stateId: 2 }, 'found by id')
  t.equal(cities.firstInState('AR|X', 'quoted'), undefined, 'not by name')
  t.equal(cities.byId(1_000_009)?.name, '東京')
  t.equal(cities.byId(6), undefined)
  const none = small([])
  sameColumns(t, decodeCityIndex(encodeCityIndex(none, KEY), KEY), none)
})

t.test('ids out of range or repeated are refused when building', async (t) => {
  t.throws(() => buildCityColumns([row(10_000_000, 'a', 'AR', 'X')]), /out of range/)
  t.throws(() => buildCityColumns([row(0, 'a', 'AR', 'X')]), /out of range/)
  t.throws(() => buildCityColumns([row(4, 'a', 'AR', 'X'), row(4, 'b', 'AR', 'X')]), /twice/)
})

t.test('a name that UTF-8 cannot carry is refused when writing', async (t) => {
  t.throws(() => encodeCityIndex(small([row(1, '\ud800x', 'AR', 'X')]), KEY), /not valid Unicode/)
})

t.test('a file of another key or format, truncated or damaged, is not used', async (t) => {
  t.equal(decodeCityIndex(file, 'another-key'), undefined, 'another key')
  t.equal(decodeCityIndex(encodeCityIndex(fresh, 'another-key'), KEY), undefined, 'written for another key')
  const damaged = (change: (copy: Buffer) => Buffer | void) => {
    const copy = Buffer.from(file)
    return change(copy) ?? copy
  }
  t.equal(decodeCityIndex(damaged((b) => { b.writeUInt32LE(CITY_INDEX_FORMAT + 1, 8) }), KEY), undefined, 'another format')
  t.equal(decodeCityIndex(damaged((b) => { b[0] = 0x58 }), KEY), undefined, 'not our magic')
  t.equal(decodeCityIndex(damaged((b) => { b.writeUInt32LE(file.length, 12) }), KEY), undefined, 'header length past the end')
  t.equal(decodeCityIndex(damaged((b) => { b.fill(0x20, 16, 40) }), KEY), undefined, 'header not JSON')
  for (const length of [0, 7, 15, 200, file.length >> 1, file.length - 1]) {
    t.equal(decodeCityIndex(file.subarray(0, length), KEY), undefined, `truncated to ${length} bytes`)
  }
  t.equal(decodeCityIndex(Buffer.concat([file, Buffer.alloc(1)]), KEY), undefined, 'a byte too many')
  t.equal(decodeCityIndex(damaged((b) => { b[b.length - 1]! ^= 1 }), KEY), undefined, 'an array byte flipped')
  const headerEnd = 16 + file.readUInt32LE(12)
  t.equal(decodeCityIndex(damaged((b) => { b[headerEnd + 1000]! ^= 1 }), KEY), undefined, 'a text byte flipped')
})

t.test('a file whose folded names no longer match foldName is not used', async (t) => {
  const [first, ...rest] = fresh.cities.folded.text
  const refolded = { ...fresh, cities: { ...fresh.cities, folded: { ...fresh.cities.folded, text: first!.toUpperCase() + rest.join('') } } }
  t.not(refolded.cities.folded.text, fresh.cities.folded.text)
  t.equal(decodeCityIndex(encodeCityIndex(refolded, KEY), KEY), undefined)
})
