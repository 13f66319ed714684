import type { ColumnType, Generated } from 'kysely'

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>

export interface IdempotencyKeysTable {
  scope: string
  key: string
  request_hash: string
  status_code: number
  response_body: string
  created_at: Timestamp
}

export interface RateLimitBucketsTable {
  bucket: string
  window_start: Timestamp
  count: number
}

export interface PlatformTables {
  idempotency_keys: IdempotencyKeysTable
  rate_limit_buckets: RateLimitBucketsTable
}

export type { Generated, Timestamp }
