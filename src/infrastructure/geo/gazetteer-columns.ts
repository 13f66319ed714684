import type { CityColumns } from './compact-cities.js'
import type { Country, State } from './gazetteer.js'

export interface StoredState extends State {
  /** False for an old state kept only so that its id resolves (./legacy-ids.ts): names never find it. */
  findable: boolean
}

/** Another name of a gazetteer city, found when no city has it as its own name. */
export interface CityAlias {
  id: number
  name: string
}

/** The whole gazetteer as the prebuilt index file (./city-index-file.ts) holds it. */
export interface GazetteerColumns {
  countries: Country[]
  /** Ascending id. */
  states: StoredState[]
  cities: CityColumns
  cityAliases: CityAlias[]
}
