/**
 * `npm run gazetteer:index`, also run by npm's `prepare` on `npm ci`: builds the gazetteer's city
 * index file ahead of time (see src/infrastructure/geo/city-index-cache.ts), so no server pays the
 * peak memory of reading the data package's ~4,300 JSON files. Never fails: without the file the server builds it on first
 * start, so an install must not break over it. Standalone, without the platform's configuration.
 */
import { loadCityColumns } from '../infrastructure/geo/city-index-cache.js'
import { stackOf } from '../shared/thrown.js'

const started = performance.now()
try {
  const r = loadCityColumns()
  const ms = (performance.now() - started).toFixed(0)
  if (r.writeError !== undefined) {
    process.stderr.write(`warning: gazetteer city index not written to ${r.path}: ${String(r.writeError)}; the server builds the index at start instead\n`)
  } else {
    process.stdout.write(`gazetteer city index ${r.from === 'file' ? 'up to date' : 'built'}: ${r.path} (${ms} ms)\n`)
  }
} catch (err) {
  process.stderr.write(`warning: gazetteer city index not built: ${stackOf(err)}\n`)
}
process.exitCode = 0
