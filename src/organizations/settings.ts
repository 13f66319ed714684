import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import { json } from '../shared/rows.js'
import { placeTimeZone } from './country-time-zone.js'

/**
 * An organization's display settings as its pages and API use them (issue 37). The time zone: the
 * one it set; else the `timezone` it was created with when it named one (anything but the default
 * UTC); else its country's (its operational address's city, else the country's capital); else UTC.
 */
export interface OrganizationSettingsView {
  time_zone: string
  time_zone_source: 'setting' | 'organization' | 'country' | 'default'
  delivery_attempt_messages: Record<string, string>
  public_proof_photos: boolean
}

export async function organizationSettings(rm: Kysely<ReadModelDatabase>, organizationId: string): Promise<OrganizationSettingsView> {
  const row = await rm.selectFrom('organizations')
    .leftJoin('organization_settings', 'organization_settings.organization_id', 'organizations.id')
    .leftJoin('places', 'places.id', 'organizations.operational_address_id')
    .select([
      'organizations.timezone', 'organization_settings.time_zone', 'organization_settings.delivery_attempt_messages', 'organization_settings.public_proof_photos',
      'places.country_code', 'places.state_code', 'places.city_name',
    ])
    .where('organizations.id', '=', organizationId).executeTakeFirst()
  const messages = row?.delivery_attempt_messages ? json<Record<string, string>>(row.delivery_attempt_messages) : {}
  const rest = { delivery_attempt_messages: messages, public_proof_photos: row?.public_proof_photos ?? false }
  if (row?.time_zone) return { time_zone: row.time_zone, time_zone_source: 'setting', ...rest }
  if (row?.timezone && row.timezone !== 'UTC') return { time_zone: row.timezone, time_zone_source: 'organization', ...rest }
  const zone = row?.country_code ? await placeTimeZone(row.country_code, row.state_code, row.city_name) : null
  return zone ? { time_zone: zone, time_zone_source: 'country', ...rest } : { time_zone: 'UTC', time_zone_source: 'default', ...rest }
}
