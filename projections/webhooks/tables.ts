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

/** An organization's live (not deleted) webhooks: the listing's `meta.total` (issue 32). */
export interface WebhookListingCountsTable {
  organization_id: string
  n: ColumnType<string, number | string, number | string>
}

export interface WebhooksTables {
  webhook_listing_counts: WebhookListingCountsTable
  webhooks: WebhooksTable
}
