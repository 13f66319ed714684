import { type Kysely, type Selectable, sql } from 'kysely'
import { type AddedCities, type AddedCity, type NewCity } from './added-cities.js'
import { type GeoAddedCitiesTable } from './geo-added-cities-table.js'

type Db = Kysely<{ geo_added_cities: GeoAddedCitiesTable }>

function toCity(row: Selectable<GeoAddedCitiesTable>): AddedCity {
  return {
    id: Number(row.id),
    name: row.name,
    countryIso: row.country_iso,
    stateCode: row.state_code,
    latitude: Number(row.latitude),
    longitude: Number(row.longitude),
  }
}

/** AddedCities in PostgreSQL, shared by all server processes. */
export class KyselyAddedCities implements AddedCities {
  constructor(private readonly db: Db) {}

  async find(countryIso: string, stateCode: string | null, normalizedName: string): Promise<AddedCity | undefined> {
    const row = await this.db
      .selectFrom('geo_added_cities')
      .selectAll()
      .where('country_iso', '=', countryIso)
      // Matches the unique index's expression, so the lookup uses it.
      .where(sql<string>`coalesce(state_code, '')`, '=', stateCode ?? '')
      .where('normalized_name', '=', normalizedName)
      .executeTakeFirst()
    return row ? toCity(row) : undefined
  }

  async findById(id: number): Promise<AddedCity | undefined> {
    if (!Number.isSafeInteger(id)) return undefined
    const row = await this.db.selectFrom('geo_added_cities').selectAll().where('id', '=', id).executeTakeFirst()
    return row ? toCity(row) : undefined
  }

  async add(city: NewCity): Promise<AddedCity> {
    // A concurrent insert of the same city makes this one wait, then do nothing; the select,
    // a new statement with a new snapshot under READ COMMITTED, then sees the winner's row.
    const inserted = await this.db
      .insertInto('geo_added_cities')
      .values({
        country_iso: city.countryIso,
        state_code: city.stateCode,
        name: city.name,
        normalized_name: city.normalizedName,
        latitude: city.latitude,
        longitude: city.longitude,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst()
    if (inserted) return toCity(inserted)
    const existing = await this.find(city.countryIso, city.stateCode, city.normalizedName)
    if (!existing) throw new Error(`geo_added_cities: ${city.countryIso}/${city.stateCode ?? '-'}/${city.normalizedName} conflicted but cannot be read`)
    return existing
  }
}
