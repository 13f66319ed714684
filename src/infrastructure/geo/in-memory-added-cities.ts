import { type AddedCities, type AddedCity, type NewCity } from './added-cities.js'
import { FIRST_ADDED_CITY_ID } from './gazetteer.js'

/** For unit tests and single-process tools; servers use KyselyAddedCities. */
export class InMemoryAddedCities implements AddedCities {
  private readonly byKey = new Map<string, AddedCity>()
  private readonly byId = new Map<number, AddedCity>()
  private nextId = FIRST_ADDED_CITY_ID

  private static key(countryIso: string, stateCode: string | null, normalizedName: string): string {
    return `${countryIso}|${stateCode ?? ''}|${normalizedName}`
  }

  async find(countryIso: string, stateCode: string | null, normalizedName: string): Promise<AddedCity | undefined> {
    return this.byKey.get(InMemoryAddedCities.key(countryIso, stateCode, normalizedName))
  }

  async findById(id: number): Promise<AddedCity | undefined> {
    return this.byId.get(id)
  }

  async add(city: NewCity): Promise<AddedCity> {
    const key = InMemoryAddedCities.key(city.countryIso, city.stateCode, city.normalizedName)
    const existing = this.byKey.get(key)
    if (existing) return existing
    const added: AddedCity = {
      id: this.nextId++,
      name: city.name,
      countryIso: city.countryIso,
      stateCode: city.stateCode,
      latitude: city.latitude,
      longitude: city.longitude,
    }
    this.byKey.set(key, added)
    this.byId.set(added.id, added)
    return added
  }
}
