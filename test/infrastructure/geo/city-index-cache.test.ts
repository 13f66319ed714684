import { readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  cityIndexKey, cityIndexPath, cityJsonPath, DEFAULT_CITY_INDEX_DIR, loadCityColumns,
} from '../../../src/infrastructure/geo/city-index-cache.js'
import { encodeCityIndex, readCityIndex } from '../../../src/infrastructure/geo/city-index-file.js'
import { buildCityColumns } from '../../../src/infrastructure/geo/compact-cities.js'

const key = cityIndexKey()
const fresh = buildCityColumns(readFileSync(cityJsonPath(), 'utf8'))
const validFile = encodeCityIndex(fresh, key)

t.test('the key names the package version and the size of city.json', async (t) => {
  const { version } = JSON.parse(readFileSync(join(cityJsonPath(), '../../../package.json'), 'utf8')) as { version: string }
  t.match(key, new RegExp(`^${version.replaceAll('.', '\\.')}-${statSync(cityJsonPath()).size}-[0-9a-f]{8}$`))
  t.equal(cityIndexKey(), key, 'stable')
  t.match(DEFAULT_CITY_INDEX_DIR, /node_modules[/\\]\.cache[/\\]shipping-platform[/\\]$/)
})

t.test('the first load builds from city.json and writes the file; the next one reads it', async (t) => {
  const dir = t.testdir()
  const first = loadCityColumns(dir)
  t.equal(first.from, 'city.json')
  t.equal(first.writeError, undefined)
  t.equal(first.path, cityIndexPath(dir, key))
  t.same(readdirSync(dir), [`cities-${key}.bin`], 'no temporary file left behind')
  t.ok(readFileSync(first.path).equals(validFile), 'the file holds the built columns')
  const second = loadCityColumns(dir)
  t.equal(second.from, 'file')
  t.equal(second.columns.names.text, fresh.names.text)
  t.same(Array.from(second.columns.inState.subarray(0, 50)), Array.from(fresh.inState.subarray(0, 50)))
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
    const loaded = loadCityColumns(dir)
    t.equal(loaded.from, 'city.json', `${what}: rebuilt`)
    t.equal(loaded.columns.folded.text, fresh.folded.text, `${what}: right columns`)
    t.ok(readFileSync(path).equals(validFile), `${what}: file replaced`)
  }
})

t.test('a file for another key under its own name is left alone and not used', async (t) => {
  const dir = t.testdir()
  const other = cityIndexPath(dir, '0.0.1-1-00000000')
  writeFileSync(other, encodeCityIndex(buildCityColumns('[["Solo","AR","X","1","2"]]'), '0.0.1-1-00000000'))
  const loaded = loadCityColumns(dir)
  t.equal(loaded.from, 'city.json')
  t.equal(loaded.columns.group.length, fresh.group.length)
  t.equal(readCityIndex(other, '0.0.1-1-00000000')?.names.text, 'Solo')
})

t.test('a tree where the file cannot be written still gets its cities', async (t) => {
  const dir = t.testdir({ 'a-file': 'x' })
  const loaded = loadCityColumns(join(dir, 'a-file', 'cache'))
  t.equal(loaded.from, 'city.json')
  t.ok(loaded.writeError, 'the write error is reported')
  t.equal(loaded.columns.group.length, fresh.group.length)
})
