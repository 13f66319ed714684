/**
 * Made ONCE (issue 14, item 3) from country-state-city@3.2.1 (GPL-3.0 package of the dr5hn
 * database, whose data is ODbL-1.0) and @countrystatecity/countries (the same database, ODbL-1.0),
 * while both were installed: writes src/infrastructure/geo/legacy-ids.generated.ts, the frozen
 * mapping from the ids the old adapter derived (positions in its sorted data, carried by events,
 * places and tariff zones) to the upstream ids of the new package. Not run by the build; kept so the
 * mapping can be checked or made again from the same two package versions.
 *
 * Run: node --import tsx infra/geo/make-legacy-ids.ts [--stats]
 *
 * Old ids (country-state-city-gazetteer.ts before the move): state id = 1-based position after
 * sorting states by (country ISO, state ISO code); city id = 1-based position after a stable sort
 * of city.json by (country ISO, state code, name, latitude, longitude); strings by code units.
 *
 * Matching, each upstream entity taken at most once:
 * - state: same country and ISO code, else same country and folded name;
 * - city: same country, state and exact name (nearest first), else same folded name in the state,
 *   else same folded name in the country within 25 km (state codes that changed), else any name at
 *   the same point (within 100 m) of the country (renamed: "Ciudad de México" → "Mexico City").
 * A matched city whose old name folds otherwise than its new one keeps the old name as an alias.
 * An old entity left without a match is "retired": its old record is frozen in the file, so its id
 * still resolves to the same place, but names no longer find it.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { foldName } from '../../src/shared/text.js'

const require = createRequire(import.meta.url)
const OLD_VERSION = '3.2.1'
const oldDir = dirname(require.resolve('country-state-city/lib/assets/city.json'))
const oldVersion = (JSON.parse(readFileSync(join(oldDir, '..', '..', 'package.json'), 'utf8')) as { version: string }).version
if (oldVersion !== OLD_VERSION) throw new Error(`country-state-city ${oldVersion} installed; the old ids are those of ${OLD_VERSION}`)
const newDir = dirname(require.resolve('@countrystatecity/countries/data/countries.json'))
const newVersion = (JSON.parse(readFileSync(join(newDir, '..', '..', 'package.json'), 'utf8')) as { version: string }).version

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
const num = (v: string | null): number | null => (v === null || v.trim() === '' || !Number.isFinite(Number(v)) ? null : Number(v))
const km = (aLat: number, aLon: number, bLat: number, bLon: number): number => {
  const r = Math.PI / 180
  const h = Math.sin((bLat - aLat) * r / 2) ** 2 + Math.cos(aLat * r) * Math.cos(bLat * r) * Math.sin((bLon - aLon) * r / 2) ** 2
  return 12742 * Math.asin(Math.sqrt(h))
}

// ---- old data, in old id order
interface OldState { isoCode: string, countryCode: string, name: string, latitude: string | null, longitude: string | null }
const oldStates = (JSON.parse(readFileSync(join(oldDir, 'state.json'), 'utf8')) as OldState[])
  .sort((a, b) => byCodeUnits(a.countryCode, b.countryCode) || byCodeUnits(a.isoCode, b.isoCode))
type OldCity = [name: string, country: string, state: string, lat: string, lon: string]
const oldCities = (JSON.parse(readFileSync(join(oldDir, 'city.json'), 'utf8')) as OldCity[])
  .map(([name, country, state, lat, lon]) => ({ name, country, state, lat: Number(lat), lon: Number(lon) }))
  .sort((a, b) => byCodeUnits(a.country, b.country) || byCodeUnits(a.state, b.state) || byCodeUnits(a.name, b.name) ||
    a.lat - b.lat || a.lon - b.lon)

// ---- new data
interface NewState { id: number, name: string, country_code: string, iso2: string }
interface NewCity { id: number, name: string, state_code: string, country_code: string, latitude: string, longitude: string }
const newStates: NewState[] = []
const newCities: NewCity[] = []
for (const country of readdirSync(newDir).filter((d) => statSync(join(newDir, d)).isDirectory())) {
  newStates.push(...JSON.parse(readFileSync(join(newDir, country, 'states.json'), 'utf8')) as NewState[])
  for (const state of readdirSync(join(newDir, country)).filter((d) => statSync(join(newDir, country, d)).isDirectory())) {
    newCities.push(...JSON.parse(readFileSync(join(newDir, country, state, 'cities.json'), 'utf8')) as NewCity[])
  }
}

// A city's state_code sometimes disagrees with its state (Mexico City's "CDMX" under "CMX"): the
// state (state_id) decides, as in src/infrastructure/geo/gazetteer-source.ts.
interface NewStateRef { id: number, iso2: string }
const stateCodeById = new Map(newStates.map((s: NewStateRef) => [s.id, s.iso2]))
for (const c of newCities as (NewCity & { state_id: number })[]) c.state_code = stateCodeById.get(c.state_id) ?? c.state_code

function group<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const item of items) {
    const k = key(item)
    const list = out.get(k)
    if (list) list.push(item)
    else out.set(k, [item])
  }
  return out
}

// ---- states
const stateTaken = new Set<number>()
const statesByCode = group(newStates, (s) => `${s.country_code}|${s.iso2.toUpperCase()}`)
const statesByName = group(newStates, (s) => `${s.country_code}|${foldName(s.name)}`)
const stateMap: number[] = oldStates.map((old) => {
  const pick = (list: NewState[] | undefined) => list?.find((s) => !stateTaken.has(s.id))
  const found = pick(statesByCode.get(`${old.countryCode}|${old.isoCode.toUpperCase()}`)) ??
    pick(statesByName.get(`${old.countryCode}|${foldName(old.name)}`))
  if (!found) return 0
  stateTaken.add(found.id)
  return found.id
})
const oldStateIdByCode = new Map(oldStates.map((s, i) => [`${s.countryCode}|${s.isoCode.toUpperCase()}`, i + 1]))
const newStateById = new Map(newStates.map((s) => [s.id, s]))
/** The new code of an old (country, state code): states matched by name may have changed code. */
const newStateCode = (country: string, code: string): string => {
  const oldId = oldStateIdByCode.get(`${country}|${code.toUpperCase()}`)
  return (oldId !== undefined ? newStateById.get(stateMap[oldId - 1]!)?.iso2 : undefined) ?? code
}

// ---- cities
const cityTaken = new Set<number>()
const coordinates = new Map(newCities.map((c) => [c.id, [Number(c.latitude), Number(c.longitude)] as const]))
const exact = group(newCities, (c) => `${c.country_code}|${c.state_code}|${c.name}`)
const foldedInState = group(newCities, (c) => `${c.country_code}|${c.state_code}|${foldName(c.name)}`)
const foldedInCountry = group(newCities, (c) => `${c.country_code}|${foldName(c.name)}`)
function nearest(list: NewCity[] | undefined, lat: number, lon: number, withinKm = Infinity): NewCity | undefined {
  let best: NewCity | undefined
  let bestKm = withinKm
  for (const c of list ?? []) {
    if (cityTaken.has(c.id)) continue
    const [cLat, cLon] = coordinates.get(c.id)!
    const d = km(lat, lon, cLat, cLon)
    if (d <= bestKm) { best = c; bestKm = d }
  }
  return best
}
const stats = { exact: 0, foldedInState: 0, inCountry: 0, samePoint: 0, retired: 0, movedOver1km: 0, renamed: 0 }
// Exact matches first over all cities, so a looser match never takes a city an exact one needs.
const cityMap: number[] = oldCities.map((old) => {
  const found = nearest(exact.get(`${old.country}|${newStateCode(old.country, old.state)}|${old.name}`), old.lat, old.lon)
  if (found) { cityTaken.add(found.id); stats.exact++ }
  return found?.id ?? 0
})
oldCities.forEach((old, i) => {
  if (cityMap[i] !== 0) return
  let found = nearest(foldedInState.get(`${old.country}|${newStateCode(old.country, old.state)}|${foldName(old.name)}`), old.lat, old.lon)
  if (found) stats.foldedInState++
  else {
    found = nearest(foldedInCountry.get(`${old.country}|${foldName(old.name)}`), old.lat, old.lon, 25)
    if (found) stats.inCountry++
  }
  if (found) { cityTaken.add(found.id); cityMap[i] = found.id }
})
// Renamed in place ("Ciudad de México" → "Mexico City"): the same point, within 100 m, same country.
const cell = (lat: number, lon: number) => `${Math.round(lat * 100)}|${Math.round(lon * 100)}`
const byCell = group(newCities.filter((c) => !cityTaken.has(c.id)), (c) => `${c.country_code}|${cell(Number(c.latitude), Number(c.longitude))}`)
oldCities.forEach((old, i) => {
  if (cityMap[i] !== 0) return
  const [la, lo] = [Math.round(old.lat * 100), Math.round(old.lon * 100)]
  const near = [-1, 0, 1].flatMap((dy) => [-1, 0, 1].flatMap((dx) => byCell.get(`${old.country}|${la + dy}|${lo + dx}`) ?? []))
  const found = nearest(near, old.lat, old.lon, 0.1)
  if (found) { cityTaken.add(found.id); cityMap[i] = found.id; stats.samePoint++ } else stats.retired++
})
const newById = new Map(newCities.map((c) => [c.id, c]))
oldCities.forEach((old, i) => {
  const c = newById.get(cityMap[i]!)
  if (!c) return
  if (km(old.lat, old.lon, Number(c.latitude), Number(c.longitude)) > 1) stats.movedOver1km++
  if (c.name !== old.name) stats.renamed++
})

// ---- output: dense arrays by old id − 1, 0 = retired; city ids delta-encoded (they mostly ascend)
const retiredStates = oldStates.flatMap((s, i) => stateMap[i] === 0
  ? [[i + 1, s.isoCode, s.name, s.countryCode, num(s.latitude), num(s.longitude)]] : [])
const retiredCities = oldCities.flatMap((c, i) => cityMap[i] === 0
  ? [[i + 1, c.name, oldStateIdByCode.get(`${c.country}|${c.state.toUpperCase()}`) ?? null, c.state, c.country, c.lat, c.lon]] : [])
let previous = 0
const cityDeltas = cityMap.map((id) => {
  if (id === 0) return 0
  const delta = id - previous
  previous = id
  return delta === 0 ? 0 : delta
})
if (cityMap.some((id, i) => id !== 0 && cityMap.indexOf(id) !== i)) throw new Error('an upstream city is mapped twice')
// Old names that no longer fold to the current one ("Ciudad de México" for "Mexico City"): still
// accepted as names of that city.
const aliases = oldCities.flatMap((old, i) => {
  const c = newById.get(cityMap[i]!)
  return c && foldName(c.name) !== foldName(old.name) ? [[i + 1, old.name]] : []
})
// Matched states whose ISO code changed (Mexico City "CDMX" → "CMX"): addresses recorded before
// (added cities are stored by state code) carry the old code.
const formerStateCodes = oldStates.flatMap((s, i) => {
  const now = newStateById.get(stateMap[i]!)
  return now && now.iso2 !== s.isoCode ? [[i + 1, s.isoCode]] : []
})
const payload = {
  from: `country-state-city@${OLD_VERSION}`, to: `@countrystatecity/countries@${newVersion}`,
  states: stateMap, cityDeltas, retiredStates, retiredCities, aliases, formerStateCodes,
}
const blob = gzipSync(JSON.stringify(payload), { level: 9 }).toString('base64')
const lines = blob.match(/.{1,120}/g)!
writeFileSync(join(import.meta.dirname, '..', '..', 'src', 'infrastructure', 'geo', 'legacy-ids.generated.ts'), `/**
 * GENERATED ONCE by infra/geo/make-legacy-ids.ts from country-state-city@${OLD_VERSION} and
 * @countrystatecity/countries@${newVersion}; do not edit. Data: the dr5hn countries-states-cities
 * database, ODbL-1.0. See ./legacy-ids.ts for the contents.
 */
export const LEGACY_IDS_GZIP_BASE64 =
${lines.map((l) => `  '${l}'`).join(' +\n')}
`)
const summary = {
  oldStates: oldStates.length, retiredStates: retiredStates.length, oldCities: oldCities.length, ...stats,
  newStates: newStates.length, newCities: newCities.length, aliases: aliases.length, formerStateCodes: formerStateCodes.length, base64Bytes: blob.length,
}
console.log(JSON.stringify(summary))
if (process.argv.includes('--stats')) {
  const per = new Map<string, number[]>()
  oldCities.forEach((c, i) => { const row = per.get(c.country) ?? [0, 0]; row[0]!++; if (cityMap[i] === 0) row[1]!++; per.set(c.country, row) })
  console.log([...per].filter(([, [, r]]) => r! > 0).sort((a, b) => b[1][1]! - a[1][1]!).slice(0, 25).map(([c, [n, r]]) => `${c} ${r}/${n}`).join(', '))
  const perState = new Map<string, number>()
  oldStates.forEach((s, i) => { if (stateMap[i] === 0) perState.set(s.countryCode, (perState.get(s.countryCode) ?? 0) + 1) })
  console.log('retired states', [...perState].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([c, n]) => `${c} ${n}`).join(', '))
  for (const iso of ['AR', 'BR', 'MX', 'CL', 'US']) console.log(iso, 'retired states:', oldStates.filter((s, i) => s.countryCode === iso && stateMap[i] === 0).map((s) => `${s.isoCode} ${s.name}`).join('; '))
}
