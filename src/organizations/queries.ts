import type { Kysely } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { Organization, Place } from '../../schemas/api/organizations.js'
import type { OrganizationsTable, PlacesTable } from '../../projections/organizations/tables.js'
import { isoOrNull } from '../shared/rows.js'

type OrgRow = Omit<OrganizationsTable, 'suspended_at' | 'created_at' | 'updated_at'> & { suspended_at: Date | string | null }


export function toOrganization(row: OrgRow): Organization {
  return {
    id: row.id,
    name: row.name,
    subdomain: row.subdomain,
    custom_domain: row.custom_domain,
    locale: row.locale,
    timezone: row.timezone,
    currency: row.currency,
    suspended_at: isoOrNull(row.suspended_at),
    operational_address_id: row.operational_address_id,
    roles: typeof row.roles === 'string' ? JSON.parse(row.roles) : row.roles,
    market: row.market,
    carriers_enabled: row.carriers_enabled,
    default_service_type: null,
    visual_settings: { logo_url: null, primary_color: null },
  }
}

export function toPlace(row: Omit<PlacesTable, 'created_at'>): Place {
  return {
    id: row.id,
    org_id: Number(row.org_internal_id),
    name: row.name,
    street: row.street,
    street_number: row.street_number,
    floor: row.floor,
    apartment: row.apartment,
    reference: row.reference,
    phone_raw: row.phone_raw,
    phone: row.phone,
    email: row.email,
    zipcode: row.zipcode,
    city: { id: Number(row.city_id), name: row.city_name ?? '' },
    state: { code: row.state_code ?? '', name: row.state_name ?? '' },
    country: { code: row.country_code ?? '', name: row.country_name ?? '' },
    geo_latitude: row.geo_latitude,
    geo_longitude: row.geo_longitude,
  }
}

export const findOrganization = (db: Kysely<ReadModelDatabase>, id: string) =>
  db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst()

export const listPlaces = (db: Kysely<ReadModelDatabase>, orgId: string) =>
  db.selectFrom('places').selectAll().where('organization_id', '=', orgId).orderBy('created_at').orderBy('id').execute()

export const findPlace = (db: Kysely<ReadModelDatabase>, orgId: string, placeId: string) =>
  db.selectFrom('places').selectAll().where('organization_id', '=', orgId).where('id', '=', placeId).executeTakeFirst()
