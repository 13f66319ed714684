/**
 * Where the prebuilt gazetteer index (./city-index-file.ts) lives and when it may be used: the
 * gazetteer loads it when its key matches the installed data, and otherwise builds it from the data
 * package (./gazetteer-source.ts) and leaves the file for the next process. `npm ci` prebuilds it
 * (`prepare` → src/cli/gazetteer-index.ts).
 *
 * Location: node_modules/.cache/shipping-platform/ of the project, the usual place of build caches;
 * `npm ci` empties node_modules, so a reinstall starts over from the data it installs.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { foldName } from '../../shared/text.js'
import { CITY_INDEX_FORMAT, readCityIndex, writeCityIndex } from './city-index-file.js'
import type { GazetteerColumns } from './gazetteer-columns.js'
import { readGazetteerSource, SOURCE_RULES_VERSION, sourceDataDir, sourceVersion } from './gazetteer-source.js'
import { LEGACY_IDS_DIGEST } from './legacy-ids.js'

// Found through the installed data package rather than this file's place, so the compiled server
// (dist/, `npm run build`) and the TypeScript one (tsx) share one index.
export const DEFAULT_CITY_INDEX_DIR = join(sourceDataDir(), '..', '..', '..', '..', '.cache', 'shipping-platform', '/')

/** Raise when foldName changes how it folds: the stored names were folded by it. */
const FOLD_RULES_VERSION = 1

// Folded names are stored, so the key also changes with anything that could fold them otherwise.
const FOLD_PROBE = 'ßæœøłđðþıħŧ ÀÉÎÕÜç Ǆ ﬁ Ⅻ x² São-Paulo D.C. l’Île ʻOla  Ōsaka'

/**
 * "csc1.0.9-1a2b3c4d-5e6f7a8b": the data package's version, the digest of the id mapping
 * (./legacy-ids.ts), then a hash of the file format, the derivation rules, the runtime's Unicode
 * version and the folding.
 */
export function cityIndexKey(): string {
  const fold = createHash('sha256')
    .update(JSON.stringify([CITY_INDEX_FORMAT, SOURCE_RULES_VERSION, process.versions.unicode, FOLD_RULES_VERSION, foldName(FOLD_PROBE)]))
    .digest('hex')
  return `csc${sourceVersion()}-${LEGACY_IDS_DIGEST}-${fold.slice(0, 8)}`
}

export const cityIndexPath = (dir: string, key: string): string => join(dir, `gazetteer-${key}.bin`)

export interface LoadedGazetteer {
  columns: GazetteerColumns
  from: 'file' | 'source'
  path: string
  /** Set when the index was built but the file could not be written (read-only tree…). */
  writeError?: unknown
}

/** The gazetteer from the index file when it fits the installed data, else built from the data package (and written). */
export function loadCityColumns(dir: string = DEFAULT_CITY_INDEX_DIR, build: () => GazetteerColumns = readGazetteerSource): LoadedGazetteer {
  const key = cityIndexKey()
  const path = cityIndexPath(dir, key)
  const stored = readCityIndex(path, key)
  if (stored) return { columns: stored, from: 'file', path }
  const columns = build()
  try {
    writeCityIndex(path, columns, key)
    return { columns, from: 'source', path }
  } catch (writeError) {
    return { columns, from: 'source', path, writeError }
  }
}
