import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
type Json<T> = ColumnType<T, string, string>

/** Organization webhooks; the secret sealed under SECRETS_KEY, bound to the webhook id. */
export interface WebhooksTable {
  id: string
  organization_id: string
  url: string
  events: Json<string[]>
  secret_encrypted: string
  created_at: Ts
  updated_at: Ts
  deleted_at: TsNull
}

export interface WebhooksTables {
  webhooks: WebhooksTable
}
