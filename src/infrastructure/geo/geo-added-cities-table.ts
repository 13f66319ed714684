import { type ColumnType } from 'kysely'

/** Row type of `geo_added_cities` (migration 2026-11-22T00-02-geo-added-cities). */
export interface GeoAddedCitiesTable {
  /** bigint identity from 10 000 000; pg returns it as a number (connection.ts parses int8). */
  id: ColumnType<string | number | bigint, never, never>
  country_iso: string
  state_code: string | null
  name: string
  normalized_name: string
  latitude: number
  longitude: number
  created_at: ColumnType<Date, never, never>
}
