/**
 * Where the prebuilt city index (./city-index-file.ts) lives and when it may be used: the gazetteer
 * loads it when its key matches the installed data, and otherwise builds the columns from city.json
 * and leaves the file for the next process. `npm ci` prebuilds it (`prepare` → src/cli/gazetteer-index.ts).
 *
 * Location: node_modules/.cache/shipping-platform/ of the project, the usual place of build caches;
 * `npm ci` empties node_modules, so a reinstall starts over from the data it installs.
 */
import { createHash } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { foldName } from '../../shared/text.js'
import { CITY_INDEX_FORMAT, readCityIndex, writeCityIndex } from './city-index-file.js'
import { buildCityColumns, type CityColumns } from './compact-cities.js'

const require = createRequire(import.meta.url)

// Found through the installed data package rather than this file's place, so the compiled server
// (dist/, `npm run build`) and the TypeScript one (tsx) share one index.
export const DEFAULT_CITY_INDEX_DIR = join(dirname(dirname(require.resolve('country-state-city/package.json'))), '.cache', 'shipping-platform', '/')

/** Raise when foldName changes how it folds: the stored names were folded by it. */
const FOLD_RULES_VERSION = 1

// Folded names are stored, so the key also changes with anything that could fold them otherwise.
const FOLD_PROBE = 'ßæœøłđðþıħŧ ÀÉÎÕÜç Ǆ ﬁ Ⅻ x² São-Paulo D.C. l’Île ʻOla  Ōsaka'

export function cityJsonPath(): string {
  return require.resolve('country-state-city/lib/assets/city.json')
}

/**
 * "3.2.1-8064491-1a2b3c4d": the package version and city.json's size, then a hash of the file
 * format, the runtime's Unicode version and the folding function.
 */
export function cityIndexKey(): string {
  const { version } = JSON.parse(readFileSync(require.resolve('country-state-city/package.json'), 'utf8')) as { version: string }
  const fold = createHash('sha256')
    .update(JSON.stringify([CITY_INDEX_FORMAT, process.versions.unicode, FOLD_RULES_VERSION, foldName(FOLD_PROBE)]))
    .digest('hex')
  return `${version}-${statSync(cityJsonPath()).size}-${fold.slice(0, 8)}`
}

export const cityIndexPath = (dir: string, key: string): string => join(dir, `cities-${key}.bin`)

export interface LoadedCityColumns {
  columns: CityColumns
  from: 'file' | 'city.json'
  path: string
  /** Set when the columns were built but the file could not be written (read-only tree…). */
  writeError?: unknown
}

/** The city columns from the index file when it fits the installed data, else built from city.json (and written). */
export function loadCityColumns(dir: string = DEFAULT_CITY_INDEX_DIR): LoadedCityColumns {
  const key = cityIndexKey()
  const path = cityIndexPath(dir, key)
  const stored = readCityIndex(path, key)
  if (stored) return { columns: stored, from: 'file', path }
  const columns = buildCityColumns(readFileSync(cityJsonPath(), 'utf8'))
  try {
    writeCityIndex(path, columns, key)
    return { columns, from: 'city.json', path }
  } catch (writeError) {
    return { columns, from: 'city.json', path, writeError }
  }
}
