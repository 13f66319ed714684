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
  kind: 'organization' | 'carrier' | 'user' | 'sign_in_link'
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

/**
 * One row per organization and active contract, from that organization's side: the contracts
 * listing's rows (issue 32), with the other party's name and market as its orders read them.
 */
export interface ContractListingsTable {
  organization_id: string
  /** The other party's role in the contract: the listing's `license`. */
  license: 'shipper' | 'carrier'
  counterpart_id: string
  contract_id: string
  name: string
  /** The other party has no market: `markets.name` lists it last in either direction. */
  no_market: boolean
  /** The other party's market, '' when none. */
  market_sort: string
}

/** An organization's active contracts per side: the contracts listing's `meta.total` (issue 32). */
export interface ContractListingCountsTable {
  organization_id: string
  license: 'shipper' | 'carrier'
  n: ColumnType<string, number | string, number | string>
}

export interface OrganizationsTables {
  organizations: OrganizationsTable
  access_tokens: AccessTokensTable
  places: PlacesTable
  contracts: ContractsTable
  contract_listings: ContractListingsTable
  contract_listing_counts: ContractListingCountsTable
}
