import { ConcurrencyError, type ExpectedVersion } from '../../shared/concurrency.js'

/**
 * The event store port. Positions and checkpoints are opaque strings so that the PostgreSQL and
 * EventStoreDB adapters are interchangeable without touching callers (DESIGN §2).
 */
export interface EventMetadata {
  actor: { kind: 'admin' | 'organization' | 'user' | 'carrier' | 'system'; id: string }
  request_id?: string | undefined
  correlation_id?: string | undefined
  causation_id?: string | undefined
  schema_version?: number | undefined
  /** W3C trace context of the request or reaction that wrote it (when tracing is on). */
  traceparent?: string | undefined
  occurred_at: string
  [key: string]: unknown
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** Idempotency: appending an event whose id is already stored appends nothing. */
  id?: string
  type: Type
  data: Data
  metadata: EventMetadata
  schemaVersion?: number
}

export interface RecordedEvent<Type extends string = string, Data = unknown> {
  id: string
  streamId: string
  /** 1-based version of the event within its stream. */
  streamVersion: number
  /** Opaque, totally ordered within one store; compare with `comparePositions`. */
  position: string
  type: Type
  data: Data
  metadata: EventMetadata
  schemaVersion: number
  recordedAt: Date
  /**
   * The stored values exactly, where the adapter can give them (PostgreSQL read as stored): the jsonb
   * columns' text and the timestamp at its microsecond precision. What the notary seals (leaf v2).
   */
  stored?: StoredForm
}

export interface StoredForm {
  data: string
  metadata: string
  /** ISO 8601 with six decimals. */
  recordedAt: string
}

// Optimistic concurrency (the expected version, the conflict) is spelled in src/shared, where the
// command handler catches the conflict; the port names it as its own.
export { ConcurrencyError, type ExpectedVersion }

export interface AppendResult {
  /** Version of the stream after the append. */
  nextVersion: number
  /** Position of the last event written (or of the earlier copy when nothing was appended). */
  position: string
  /** False when every event id was already stored. */
  appended: boolean
}

export interface ReadAllResult {
  events: RecordedEvent[]
  /** Resume from here; equals the input when nothing new was visible. */
  checkpoint: string
}

export interface StreamAppend {
  streamId: string
  events: NewEvent[]
  expected: ExpectedVersion
}

export interface EventStore {
  append(streamId: string, events: NewEvent[], expected: ExpectedVersion): Promise<AppendResult>
  /**
   * One atomic write to several streams: every append or none. A conflict on any stream throws
   * that stream's ConcurrencyError and leaves all of them as they were. Results in input order.
   */
  appendMany(appends: StreamAppend[]): Promise<AppendResult[]>
  readStream(streamId: string, opts?: { fromVersion?: number; toPosition?: string; until?: Date }): Promise<RecordedEvent[]>
  /**
   * Several streams at once (one round trip where the store allows it), each in version order; with
   * `types`, only events of those types. A stream with no such event is missing from the map.
   */
  readStreams(streamIds: readonly string[], opts?: { types?: readonly string[] }): Promise<Map<string, RecordedEvent[]>>
  /** Events after `checkpoint` in commit order; never skips one committed late by a concurrent writer. */
  readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult>
  /**
   * Called (at least once) after new events may have become visible, with the position of one of
   * them when the store knows it (readers then know how far the log goes without asking).
   * Returns an unsubscribe function.
   */
  onAppended(listener: (head?: string) => void): () => void
  /** Position of the newest committed event, for lag figures. */
  headPosition(): Promise<string>
  /** Events committed after a position (a reader's lag); null when the store cannot count them, 0 at the head. */
  eventsAfter(position: string): Promise<number | null>
  comparePositions(a: string, b: string): number
  /**
   * The stream holding the event with this id, if any. Optional: a store that cannot look an event
   * up by id (KurrentDB) leaves it out, and its callers go without (see create-shipment.ts).
   */
  streamOfEvent?(eventId: string): Promise<string | undefined>
  readonly startPosition: string
  close(): Promise<void>
}

export { streamCategory } from '../../shared/stream-category.js'
