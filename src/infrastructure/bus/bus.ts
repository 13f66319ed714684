/**
 * The bus port (DESIGN §1–2): everything that reacts to events (notifier, expiry, process manager)
 * subscribes here, never to an adapter. Adapters: NATS JetStream (`NATS_URL`) and the in-process
 * bus, durable in the database. Both give the same guarantees, checked by one contract suite:
 * at-least-once delivery to named durable consumers, explicit settlement, delayed redelivery,
 * a delivery limit after which the message is recorded as a dead letter (never dropped), and
 * per-key order for consumers that ask for it.
 */

import type { PublishHealth } from './publish-health.js'

/** A message as published. `id` is its identity: publishing the same id again is a no-op. */
export interface OutgoingMessage<T = unknown> {
  /** Dot-separated subject under one of BUS_SUBJECT_ROOTS, e.g. `events.shipment.ShipmentCreated`. */
  subject: string
  /** Deduplication and idempotency key (the event id for relayed events). */
  id: string
  data: T
  /** Ordering key (the event's stream id): ordered consumers see one key's messages in publish order. */
  key?: string | undefined
  headers?: Record<string, string> | undefined
  /** Deliver to this consumer only (dead-letter replays). */
  onlyFor?: string | undefined
}

export interface BusMessage<T = unknown> {
  id: string
  subject: string
  data: T
  key: string | undefined
  headers: Readonly<Record<string, string>>
  publishedAt: Date
}

/**
 * One delivery of a message to one consumer. The handler settles it: returning acks it (unless it
 * called `nak` or `deadLetter`), throwing naks it with the consumer's retry delay. A delivery past
 * the consumer's `maxDeliveries` becomes a dead letter instead of being retried.
 */
export interface Delivery<T = unknown> extends BusMessage<T> {
  consumer: string
  /** 1 on the first delivery. */
  attempt: number
  maxDeliveries: number
  /** Acknowledge now rather than on return (the default). */
  ack(): void
  /** Redeliver no sooner than `delayMs` (default: the consumer's retry delay for this attempt). */
  nak(delayMs?: number): void
  /** Stop delivering it: record it as a dead letter with this reason. */
  deadLetter(reason: string): void
}

export type Handler<T = unknown> = (delivery: Delivery<T>) => Promise<void> | void

export interface ConsumerOptions {
  /** Durable name, `[A-Za-z0-9_-]+`: a restarted or second process with the same name resumes it. */
  name: string
  /** NATS-style patterns (`*` one token, `>` the rest), e.g. `events.shipment.>`. */
  subjects: string[]
  /** Deliveries before a message is dead-lettered. Default 5. */
  maxDeliveries?: number
  /** Delay before redelivery after a failed attempt n (index n-1; the last entry repeats). */
  retryDelaysMs?: number[]
  /** A delivery not settled within this time (a handler still running keeps it alive) is redelivered: how long a dead process holds a message. Default 2.5 s. */
  ackWaitMs?: number
  /** Keep publish order per message key (event stream); a failing message holds back its key. */
  ordered?: boolean
  /** Handlers running at once in this process. Default 16 (on NATS an ordered consumer runs one per partition). */
  concurrency?: number
  /** Where a consumer that does not exist yet starts: every retained message (default) or new ones only. */
  startAt?: 'all' | 'new'
}

export interface Subscription {
  readonly name: string
  /** Stops fetching; waits up to `graceMs` (default 5 s) for running handlers, whose messages are otherwise redelivered. */
  stop(opts?: { graceMs?: number }): Promise<void>
}

export interface ConsumerStats {
  name: string
  /** Messages not yet acknowledged: waiting, delayed for retry, or being handled. */
  pending: number
  /** Of those, delivered and not yet settled. */
  inFlight: number
}

export interface PublishResult {
  /** Messages stored; the rest were duplicates of an id already published. */
  published: number
  duplicates: number
}

export interface Bus {
  readonly kind: 'nats' | 'in-process'
  publish(messages: OutgoingMessage | OutgoingMessage[]): Promise<PublishResult>
  subscribe<T = unknown>(options: ConsumerOptions, handler: Handler<T>): Promise<Subscription>
  /** Every durable consumer known to the bus (including ones no process subscribes to right now). */
  consumerStats(): Promise<ConsumerStats[]>
  /** Deletes a durable consumer and its pending messages (a reaction that was removed from the code). */
  removeConsumer(name: string): Promise<void>
  /** Throws when the bus cannot be reached (for /ready). */
  ping(): Promise<void>
  /** How this process's latest publishes went (for /ready: failing publishes make the bus degraded). */
  publishHealth(): PublishHealth
  /** Stops every subscription (see `Subscription.stop`) and releases connections. */
  close(opts?: { graceMs?: number }): Promise<void>
}

export interface BusLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export const silentLogger: BusLogger = { info() {}, warn() {}, error() {} }

/** Top-level subject tokens the bus carries (the NATS stream captures `<root>.>` for each). */
export const BUS_SUBJECT_ROOTS = ['events', 'commands'] as const

export const CONSUMER_DEFAULTS = {
  maxDeliveries: 5,
  retryDelaysMs: [1_000, 5_000, 30_000, 120_000, 600_000],
  ackWaitMs: 2_500,
  concurrency: 16,
} as const

/** Header names the adapters use on the wire; handlers see them, publishers must not set them. */
export const BUS_HEADERS = {
  key: 'Bus-Key',
  replayOf: 'Bus-Replay-Of',
  onlyFor: 'Bus-Only-For',
} as const

/**
 * A stored message's headers column (timers, dead letters, the in-process bus's messages) as the
 * record it was written from: jsonb parsed by pg, or json text. Every value is a string
 * (the bus writes nothing else); one that is not is left out rather than trusted.
 */
export function headersOf(column: unknown): Record<string, string> {
  const parsed: unknown = typeof column === 'string' ? JSON.parse(column) : column
  const headers: Record<string, string> = {}
  if (typeof parsed !== 'object' || parsed === null) return headers
  for (const [name, value] of Object.entries(parsed)) if (typeof value === 'string') headers[name] = value
  return headers
}
