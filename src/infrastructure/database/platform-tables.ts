import type { ColumnType, Generated } from 'kysely'

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
/** bigint: pg hands it back as text. */
type Int8 = ColumnType<string | number, string | number | bigint, string | number | bigint>
type Int8Identity = ColumnType<string | number, never, never>
/** json/jsonb: written as text (or a value pg serializes), read back parsed (jsonb) or as text (json). */
type Json = ColumnType<unknown, unknown, unknown>
/** A column with a database default. */
type Defaulted<T> = ColumnType<T, T | undefined, T>

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

// --- The bus (migrations 2026-11-22T00-10 … 00-14, 2026-11-24T00-02): the in-process adapter's log and
// deliveries, dead letters, the relay's checkpoints, consumers' processed messages and start positions.

export interface BusMessagesTable {
  seq: Int8Identity
  message_id: string
  subject: string
  ordering_key: string | null
  data: Json
  headers: Defaulted<Json>
  published_at: Timestamp
}

export interface BusConsumersTable {
  name: string
  subjects: string[]
  subject_pattern: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface BusDeliveriesTable {
  consumer: string
  seq: Int8
  ordering_key: string | null
  attempts: Defaulted<number>
  available_at: Timestamp
  leased_until: NullableTimestamp
  last_error: string | null
}

export interface BusDeadLettersTable {
  id: Int8Identity
  consumer: string
  message_id: string
  /** The adapter's id of this copy (NATS stream sequence, in-process seq). */
  transport_ref: string
  subject: string
  ordering_key: string | null
  data: Json
  headers: Defaulted<Json>
  deliveries: number
  reason: string
  error: string | null
  published_at: NullableTimestamp
  dead_at: Timestamp
  replayed_at: NullableTimestamp
}

export interface BusConsumerStatsTable {
  consumer: string
  redeliveries: Defaulted<Int8>
  updated_at: Timestamp
}

export interface BusRelayCheckpointsTable {
  name: string
  checkpoint: string
  owner: string | null
  lease_until: NullableTimestamp
  updated_at: Timestamp
}

export interface BusProcessedMessagesTable {
  consumer: string
  message_id: string
  processed_at: Timestamp
}

export interface BusConsumerStartPositionsTable {
  consumer: string
  /** Null: from the head of the log at the consumer's first start. */
  position: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

// --- Timers (migration 2026-11-22T00-13): a message published once at `fire_at`.

export interface BusTimersTable {
  id: string
  /** Bumped by every (re)schedule; part of the published message id. */
  generation: Defaulted<number>
  subject: string
  ordering_key: string | null
  data: Json
  headers: Defaulted<Json>
  fire_at: Timestamp
  state: Defaulted<'scheduled' | 'fired' | 'cancelled'>
  leased_until: NullableTimestamp
  attempts: Defaulted<number>
  last_error: string | null
  created_at: Timestamp
  updated_at: Timestamp
  fired_at: NullableTimestamp
}

// --- The notifications outbox (migrations 2026-11-22T00-31, 2026-11-24T00-61, 2026-11-25T01-00,
// 2026-11-26T00-01): carrier notifications and organization webhooks to send, and their attempts.

export interface CarrierNotificationsTable {
  seq: Int8Identity
  id: string
  source_event_id: string
  /** `carrier`: carrier_id and shipment_id set; `webhook`: webhook_id and organization_id set. */
  target: Defaulted<'carrier' | 'webhook'>
  carrier_id: string | null
  webhook_id: string | null
  organization_id: string | null
  event: string
  shipment_id: Int8 | null
  occurred_at: Timestamp
  payload: string
  status: Defaulted<'pending' | 'delivered' | 'failed'>
  attempts: Defaulted<number>
  /** Attempts since the schedule last (re)started: a manual redelivery starts it again. */
  round_attempts: Defaulted<number>
  next_attempt_at: NullableTimestamp
  leased_until: NullableTimestamp
  last_status_code: number | null
  last_error: string | null
  delivered_at: NullableTimestamp
  traceparent: string | null
  /** Pending notifications of one subject go out in order. */
  subject: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface CarrierNotificationAttemptsTable {
  id: Int8Identity
  notification_id: string
  attempt: number
  attempted_at: Timestamp
  status_code: number | null
  latency_ms: number
  error: string | null
  response_excerpt: string | null
}

/** What the notifier keeps of each shipment it heard created (its later events name no carrier). */
export interface NotifierShipmentsTable {
  shipment_id: Int8
  carrier_id: string | null
  integration: string
}

export interface BusTables {
  bus_messages: BusMessagesTable
  bus_consumers: BusConsumersTable
  bus_deliveries: BusDeliveriesTable
  bus_dead_letters: BusDeadLettersTable
  bus_consumer_stats: BusConsumerStatsTable
  bus_relay_checkpoints: BusRelayCheckpointsTable
  bus_processed_messages: BusProcessedMessagesTable
  bus_consumer_start_positions: BusConsumerStartPositionsTable
  bus_timers: BusTimersTable
}

export interface OutboxTables {
  carrier_notifications: CarrierNotificationsTable
  carrier_notification_attempts: CarrierNotificationAttemptsTable
  notifier_shipments: NotifierShipmentsTable
}

export interface PlatformTables extends BusTables, OutboxTables {
  idempotency_keys: IdempotencyKeysTable
  rate_limit_buckets: RateLimitBucketsTable
}

export type { Generated, Timestamp }
