import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { cityJsonPath } from '../../../src/infrastructure/geo/city-index-cache.js'
import { CITY_INDEX_FORMAT, decodeCityIndex, encodeCityIndex } from '../../../src/infrastructure/geo/city-index-file.js'
import { buildCityColumns, type CityColumns, CompactCities } from '../../../src/infrastructure/geo/compact-cities.js'
import { countryStateCityGazetteer } from '../../../src/infrastructure/geo/country-state-city-gazetteer.js'
import type { State } from '../../../src/infrastructure/geo/gazetteer.js'
import { foldName } from '../../../src/shared/text.js'

const KEY = 'test-key'
const fresh = buildCityColumns(readFileSync(cityJsonPath(), 'utf8'))
const file = encodeCityIndex(fresh, KEY)

const g = countryStateCityGazetteer()
const stateByCode = new Map<string, State>()
for (let id = 1; g.stateById(id); id++) {
  const s = g.stateById(id)!
  stateByCode.set(`${s.countryIso}|${s.code.toUpperCase()}`, s)
}

const bytes = (a: Float64Array | Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength)

function sameColumns(t: Test, actual: CityColumns | undefined, expected: CityColumns): void {
  if (!actual) {
    t.fail('no columns')
    return
  }
  t.same(actual.groupCountry, expected.groupCountry, 'group countries')
  t.same(actual.groupStateCode, expected.groupStateCode, 'group state codes')
  t.ok(actual.names.text === expected.names.text, 'names text')
  t.ok(actual.folded.text === expected.folded.text, 'folded text')
  for (const name of ['latitude', 'longitude', 'group', 'inState', 'inCountry'] as const) {
    t.ok(bytes(actual[name]).equals(bytes(expected[name])), name)
  }
  t.ok(bytes(actual.names.ends).equals(bytes(expected.names.ends)), 'names ends')
  t.ok(bytes(actual.folded.ends).equals(bytes(expected.folded.ends)), 'folded ends')
}

t.test('the file gives back exactly the columns it was made from', async (t) => {
  t.comment(`${(file.length / 1e6).toFixed(1)} MB for ${fresh.group.length} cities`)
  sameColumns(t, decodeCityIndex(file, KEY), fresh)
  t.equal(file.toString('latin1', 0, 8), 'SPCITIDX')
  t.equal(file.readUInt32LE(8), CITY_INDEX_FORMAT)
  t.ok(encodeCityIndex(fresh, KEY).equals(file), 'the same columns always make the same bytes')
})

t.test('the index loaded from the file answers like the freshly built one', async (t) => {
  const built = new CompactCities(fresh, stateByCode)
  const loaded = new CompactCities(decodeCityIndex(file, KEY)!, stateByCode)
  // Pinned ids (country-state-city 3.2.1), accents, and names several cities share.
  t.match(loaded.firstInState('AR|X', foldName('Córdoba')), { id: 1409, name: 'Córdoba', stateId: 152, stateCode: 'X', countryIso: 'AR' })
  t.match(loaded.firstInState('BR|SP', foldName('SAO PAULO')), { id: 15544, name: 'São Paulo' })
  t.equal(loaded.byId(148038)?.name, 'Raffingora')
  t.equal(loaded.byId(148039), undefined)
  t.equal(loaded.uniqueInCountry('AR', 'cordoba')?.id, 1409)
  t.equal(loaded.uniqueInCountry('CO', 'cordoba'), undefined, 'three Córdobas in Colombia')
  t.ok(loaded.firstInState('CO|QUI', 'cordoba'))
  let compared = 0
  for (let id = 1; id <= fresh.group.length; id += 37) {
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

t.test('small indexes round-trip too: escapes, non-Latin names, none at all', async (t) => {
  const columns = buildCityColumns(String.raw`[["Zürich","CH","ZH","47.36667","8.55"],["Qu\"oted","AR","X","1","2"],["東京","JP","13","35.6895","139.69171"],["Ōsaka","JP","27","34.69374","135.50218"]]`)
  sameColumns(t, decodeCityIndex(encodeCityIndex(columns, KEY), KEY), columns)
  const none = buildCityColumns('[]')
  sameColumns(t, decodeCityIndex(encodeCityIndex(none, KEY), KEY), none)
})

t.test('a name that UTF-8 cannot carry is refused when writing', async (t) => {
  t.throws(() => encodeCityIndex(buildCityColumns(String.raw`[["\ud800x","AR","X","1","2"]]`), KEY), /not valid Unicode/)
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
  const [first, ...rest] = fresh.folded.text
  const refolded = { ...fresh, folded: { ...fresh.folded, text: first!.toUpperCase() + rest.join('') } }
  t.not(refolded.folded.text, fresh.folded.text)
  t.equal(decodeCityIndex(encodeCityIndex(refolded, KEY), KEY), undefined)
})
