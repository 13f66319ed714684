/**
 * The ids of the gazetteer's states and cities (DESIGN §3.4b: stable integer ids).
 *
 * Until issue 14 the gazetteer was country-state-city@3.2.1 (GPL-3.0), which has no ids; the old
 * adapter derived them from positions in its sorted data, and events, places and tariff zones
 * carry them. The data now comes from @countrystatecity/countries (the same dr5hn database,
 * ODbL-1.0), whose states and cities have upstream integer ids. The rule:
 * - an entity matched to an old one (./legacy-ids.generated.ts, made once by
 *   infra/geo/make-legacy-ids.ts) keeps its old id: what is stored keeps meaning the same place,
 *   and ids compared with each other (tariff zones' city_ids) keep agreeing;
 * - any other entity gets its upstream id plus an offset above every old id (states
 *   NEW_STATE_ID_OFFSET + id, cities NEW_CITY_ID_OFFSET + id), so a newer package version adds
 *   ids without renumbering;
 * - an old entity the new data lacks ("retired") is kept with its old record, by id only;
 * - a city renamed in place keeps its old name as an alias ("Ciudad de México" → "Mexico City").
 * Country ids are still derived from the ISO letters (./countrystatecity-gazetteer.ts).
 */
import { createHash } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import type { CityRow } from './compact-cities.js'
import { FIRST_ADDED_CITY_ID } from './gazetteer.js'
import type { CityAlias, StoredState } from './gazetteer-columns.js'
import { LEGACY_IDS_GZIP_BASE64 } from './legacy-ids.generated.js'

/** Above the 4,963 old state ids. */
export const NEW_STATE_ID_OFFSET = 100_000
/** Above the 148,038 old city ids, below FIRST_ADDED_CITY_ID with room for 8.9 million upstream ids. */
export const NEW_CITY_ID_OFFSET = 1_000_000

type RetiredState = [id: number, code: string, name: string, countryIso: string, latitude: number | null, longitude: number | null]
type RetiredCity = [id: number, name: string, stateId: number | null, stateCode: string, countryIso: string, latitude: number, longitude: number]

interface Payload {
  from: string
  to: string
  /** By old state id − 1: the upstream state id, 0 when retired. */
  states: number[]
  /** By old city id − 1: the upstream city id as a difference from the previous non-zero one, 0 when retired. */
  cityDeltas: number[]
  retiredStates: RetiredState[]
  retiredCities: RetiredCity[]
  /** [old city id, old name] where the old name no longer folds to the current one. */
  aliases: [id: number, name: string][]
  /** [old state id, old ISO code] of matched states whose code changed. */
  formerStateCodes: [id: number, code: string][]
}

/** Changes whenever the mapping does, so the prebuilt index is rebuilt (./city-index-cache.ts). */
export const LEGACY_IDS_DIGEST = createHash('sha256')
  .update(`${NEW_STATE_ID_OFFSET}|${NEW_CITY_ID_OFFSET}|${LEGACY_IDS_GZIP_BASE64}`)
  .digest('hex')
  .slice(0, 8)

export interface LegacyIds {
  /** The package whose old ids are kept, and the one they were matched to. */
  from: string
  to: string
  stateIdOf(upstreamId: number): number
  cityIdOf(upstreamId: number): number
  retiredStates: StoredState[]
  retiredCities: CityRow[]
  /** Old names of renamed cities ("Ciudad de México" of Mexico City), still accepted as names. */
  aliases: CityAlias[]
  /** State id → the ISO code it had in the old data, where that changed ("CDMX" of Mexico City, now "CMX"). */
  formerStateCodes: Map<number, string>
}

/** Decodes the frozen mapping (~20 ms); only building the index needs it. */
export function legacyIds(): LegacyIds {
  const payload = JSON.parse(gunzipSync(Buffer.from(LEGACY_IDS_GZIP_BASE64, 'base64')).toString('utf8')) as Payload
  const stateByUpstream = new Map<number, number>()
  payload.states.forEach((upstream, i) => { if (upstream !== 0) stateByUpstream.set(upstream, i + 1) })
  const cityByUpstream = new Map<number, number>()
  let upstream = 0
  payload.cityDeltas.forEach((delta, i) => {
    if (delta === 0) return
    upstream += delta
    cityByUpstream.set(upstream, i + 1)
  })
  return {
    from: payload.from,
    to: payload.to,
    stateIdOf: (id) => stateByUpstream.get(id) ?? NEW_STATE_ID_OFFSET + id,
    cityIdOf: (id) => {
      const canonical = cityByUpstream.get(id) ?? NEW_CITY_ID_OFFSET + id
      if (canonical >= FIRST_ADDED_CITY_ID) throw new Error(`upstream city id ${id} reaches the ids of added cities`)
      return canonical
    },
    retiredStates: payload.retiredStates.map(([id, code, name, countryIso, latitude, longitude]) =>
      ({ id, code, name, countryIso, latitude, longitude, findable: false })),
    retiredCities: payload.retiredCities.map(([id, name, stateId, stateCode, countryIso, latitude, longitude]) =>
      ({ id, name, stateId, stateCode, countryIso, latitude, longitude, findable: false })),
    aliases: payload.aliases.map(([id, name]) => ({ id, name })),
    formerStateCodes: new Map(payload.formerStateCodes),
  }
}
