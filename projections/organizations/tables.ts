import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>

export interface OrganizationsTable {
  id: string
  internal_id: number
  name: string
  subdomain: string
  roles: string[]
  currency: string
  locale: string
  timezone: string
  market: string | null
  custom_domain: string | null
  carriers_enabled: boolean
  operational_address_id: string | null
  suspended_at: TsNull
  created_at: Ts
  updated_at: Ts
}

/** Organization tokens and carrier API keys alike: only the hash is stored. */
export interface AccessTokensTable {
  token_hash: string
  token_id: string
  kind: 'organization' | 'carrier' | 'user'
  subject_id: string
  created_at: Ts
  expires_at: TsNull
  revoked_at: TsNull
}

export interface PlacesTable {
  id: string
  organization_id: string
  org_internal_id: number
  name: string
  street: string | null
  street_number: string | null
  floor: string | null
  apartment: string | null
  reference: string | null
  phone_raw: string | null
  phone: string | null
  email: string | null
  zipcode: string | null
  city_id: number | null
  city_name: string | null
  state_id: number | null
  state_code: string | null
  state_name: string | null
  country_id: number | null
  country_code: string | null
  country_name: string | null
  geo_latitude: number | null
  geo_longitude: number | null
  created_at: Ts
}

export interface ContractsTable {
  id: string
  carrier_id: string
  shipper_id: string
  status: 'active' | 'terminated'
  signed_at: Ts
}

export interface OrganizationsTables {
  organizations: OrganizationsTable
  access_tokens: AccessTokensTable
  places: PlacesTable
  contracts: ContractsTable
}
