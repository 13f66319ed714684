// Memory and speed of the offline gazetteer (issue goal: server peak RSS ≤ 250 MB).
// Run: node --expose-gc --import tsx test/bench/gazetteer.bench.ts
import { countrystatecityGazetteer } from '../../src/infrastructure/geo/countrystatecity-gazetteer.js'

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`

gc()
const before = process.memoryUsage()
const g = countrystatecityGazetteer()
let started = performance.now()
g.preload()
const loadMs = performance.now() - started
const peakRss = process.memoryUsage().rss
gc()
const after = process.memoryUsage()
console.log(`preload: ${loadMs.toFixed(0)} ms`)
console.log(`heap used: ${mb(before.heapUsed)} -> ${mb(after.heapUsed)} (+${mb(after.heapUsed - before.heapUsed)})`)
console.log(`rss: ${mb(before.rss)} -> ${mb(peakRss)} right after preload, ${mb(after.rss)} after gc (+${mb(after.rss - before.rss)}), process peak ${mb(process.resourceUsage().maxRSS * 1024)}`)

const lookups: [string, string | undefined, string][] = [
  ['AR', 'X', 'Córdoba'], ['BR', 'SP', 'São Paulo'], ['US', 'CA', 'los angeles'], ['AR', undefined, 'cordoba'],
  ['CO', undefined, 'Córdoba'], ['AR', 'X', 'Villa Inexistente'], ['DE', 'BY', 'München'], ['JP', undefined, 'Tokyo'],
]
const rounds = 20_000
started = performance.now()
let found = 0
for (let i = 0; i < rounds; i++) for (const [c, s, n] of lookups) if (g.city(c, s, n)) found++
const perLookup = (performance.now() - started) * 1000 / (rounds * lookups.length)
console.log(`city(): ${perLookup.toFixed(2)} µs per lookup (${found} found of ${rounds * lookups.length})`)
started = performance.now()
for (let i = 0; i < rounds * lookups.length; i++) g.cityById(1 + (i * 7919) % 148038)
console.log(`cityById(): ${((performance.now() - started) * 1000 / (rounds * lookups.length)).toFixed(2)} µs per lookup`)
