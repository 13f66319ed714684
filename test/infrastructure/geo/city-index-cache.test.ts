import { readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  cityIndexKey, cityIndexPath, DEFAULT_CITY_INDEX_DIR, loadCityColumns,
} from '../../../src/infrastructure/geo/city-index-cache.js'
import { encodeCityIndex, readCityIndex } from '../../../src/infrastructure/geo/city-index-file.js'
import { buildCityColumns } from '../../../src/infrastructure/geo/compact-cities.js'
import { readGazetteerSource, sourceVersion } from '../../../src/infrastructure/geo/gazetteer-source.js'
import { LEGACY_IDS_DIGEST } from '../../../src/infrastructure/geo/legacy-ids.js'

const key = cityIndexKey()
const fresh = readGazetteerSource()
const validFile = encodeCityIndex(fresh, key)
/** Builds like the real source, counting the builds. */
const counting = () => {
  const calls = { n: 0 }
  return { calls, build: () => { calls.n++; return fresh } }
}

t.test('the key names the data package version and the id mapping', async (t) => {
  t.match(key, new RegExp(`^csc${sourceVersion().replaceAll('.', '\\.')}-${LEGACY_IDS_DIGEST}-[0-9a-f]{8}$`))
  t.equal(sourceVersion(), '1.0.9')
  t.equal(cityIndexKey(), key, 'stable')
  t.match(DEFAULT_CITY_INDEX_DIR, /node_modules[/\\]\.cache[/\\]shipping-platform[/\\]$/)
})

t.test('the first load builds from the data package and writes the file; the next one reads it', async (t) => {
  const dir = t.testdir()
  const first = loadCityColumns(dir)
  t.equal(first.from, 'source')
  t.equal(first.writeError, undefined)
  t.equal(first.path, cityIndexPath(dir, key))
  t.same(readdirSync(dir), [`gazetteer-${key}.bin`], 'no temporary file left behind')
  t.ok(readFileSync(first.path).equals(validFile), 'the file holds the built gazetteer')
  const { calls, build } = counting()
  const second = loadCityColumns(dir, build)
  t.equal(second.from, 'file')
  t.equal(calls.n, 0, 'nothing built')
  t.equal(second.columns.cities.names.text, fresh.cities.names.text)
  t.same(second.columns.states, fresh.states)
  t.same(Array.from(second.columns.cities.inState.subarray(0, 50)), Array.from(fresh.cities.inState.subarray(0, 50)))
})

t.test('a stale, damaged, truncated or foreign file is ignored and replaced', async (t) => {
  const cases: [string, (path: string) => void][] = [
    ['truncated', (path) => { writeFileSync(path, validFile); truncateSync(path, validFile.length - 100) }],
    ['damaged', (path) => { const b = Buffer.from(validFile); b[b.length >> 1]! ^= 0xff; writeFileSync(path, b) }],
    ['not an index at all', (path) => writeFileSync(path, 'hello')],
    ['written for another key', (path) => writeFileSync(path, encodeCityIndex(fresh, `${key}-other`))],
  ]
  for (const [what, spoil] of cases) {
    const dir = t.testdir()
    const path = cityIndexPath(dir, key)
    spoil(path)
    const { calls, build } = counting()
    const loaded = loadCityColumns(dir, build)
    t.equal(loaded.from, 'source', `${what}: rebuilt`)
    t.equal(calls.n, 1)
    t.ok(readFileSync(path).equals(validFile), `${what}: file replaced`)
  }
})

t.test('a file for another key under its own name is left alone and not used', async (t) => {
  const dir = t.testdir()
  const other = cityIndexPath(dir, 'csc0.0.1-00000000-00000000')
  const solo = { countries: [], states: [], cityAliases: [], cities: buildCityColumns([{ id: 1, name: 'Solo', countryIso: 'AR', stateCode: 'X', stateId: null, latitude: 1, longitude: 2, findable: true }]) }
  writeFileSync(other, encodeCityIndex(solo, 'csc0.0.1-00000000-00000000'))
  const loaded = loadCityColumns(dir, counting().build)
  t.equal(loaded.from, 'source')
  t.equal(loaded.columns.cities.ids.length, fresh.cities.ids.length)
  t.equal(readCityIndex(other, 'csc0.0.1-00000000-00000000')?.cities.names.text, 'Solo')
})

t.test('a tree where the file cannot be written still gets its gazetteer', async (t) => {
  const dir = t.testdir({ 'a-file': 'x' })
  const loaded = loadCityColumns(join(dir, 'a-file', 'cache'), counting().build)
  t.equal(loaded.from, 'source')
  t.ok(loaded.writeError, 'the write error is reported')
  t.equal(loaded.columns.cities.ids.length, fresh.cities.ids.length)
})
