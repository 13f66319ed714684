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

/** Migration 2026-11-24T00-01: one token bucket per access token (src/infrastructure/rate-limit). */
export interface RateLimitBucketsTable {
  bucket: string
  tokens: number
  updated_at: Timestamp
}

export interface PlatformTables {
  idempotency_keys: IdempotencyKeysTable
  rate_limit_buckets: RateLimitBucketsTable
}

export type { Generated, Timestamp }
