import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>

export interface CarriersTable {
  id: string
  organization_id: string
  name: string
  integration: 'custom' | 'service_routes'
  visibility: 'private' | 'public'
  access_mode: 'open' | 'contract'
  certification_status: string
  notification_url: string | null
  quote_url: string | null
  quote_mode: 'tariff' | 'api'
  created_at: Ts
  updated_at: Ts
}

/** HMAC secrets, encrypted under SECRETS_KEY; a rotated-out one carries `expires_at`. */
export interface CarrierSecretsTable {
  secret_id: string
  carrier_id: string
  secret_encrypted: string
  created_at: Ts
  expires_at: TsNull
}

export interface ServiceTypesTable {
  id: ColumnType<number, number, number>
  carrier_id: string
  code: string
  name: string
  created_at: Ts
}

export interface CarriersTables {
  carriers: CarriersTable
  carrier_secrets: CarrierSecretsTable
  service_types: ServiceTypesTable
}
