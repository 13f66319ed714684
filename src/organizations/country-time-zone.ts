import { getCountryByCode, getTimezoneForCity } from '@countrystatecity/countries'

/**
 * The time zone of a place from the gazetteer (issue 37: an organization's default): its city's when
 * the gazetteer knows the city, else its country's capital's, else the country's first. Null for a
 * country the gazetteer does not know. Read from the package's files once per place and kept.
 */
const known = new Map<string, Promise<string | null>>()

export function placeTimeZone(country: string, state: string | null, city: string | null): Promise<string | null> {
  const key = `${country}\u0000${state ?? ''}\u0000${city ?? ''}`
  let found = known.get(key)
  if (!found) {
    found = lookUp(country.toUpperCase(), state, city).catch(() => null)
    known.set(key, found)
  }
  return found
}

async function lookUp(country: string, state: string | null, city: string | null): Promise<string | null> {
  if (state && city) {
    const zone = await getTimezoneForCity(country, state, city)
    if (zone && isTimeZone(zone)) return zone
  }
  const meta = await getCountryByCode(country)
  const zones = (meta?.timezones ?? []).map((z) => z.zoneName).filter(isTimeZone)
  const capital = (meta?.capital ?? '').normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/ /g, '_')
  return zones.find((z) => capital !== '' && z.endsWith(`/${capital}`)) ?? zones[0] ?? null
}

/** An IANA name this runtime can format times in. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return zone.length > 0 && zone.length <= 64
  } catch {
    return false
  }
}
