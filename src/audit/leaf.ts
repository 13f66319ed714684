import { createHash } from 'node:crypto'
import canonicalize from 'canonicalize'

/**
 * What the notary seals of an event: every field a replay or an `?as_of=` answer depends on, as the
 * event was stored (its type and payload before any upcaster), never its position (commit order is
 * the leaf's index instead). The field names are those of the API's history.
 */
export interface SealedRecord {
  stream_id: string
  stream_version: number
  event_id: string
  type: string
  schema_version: number
  data: unknown
  metadata: unknown
  /** ISO 8601 at millisecond precision, as the event store port reads it and `/events` shows it. */
  recorded_at: string
}

/** The record as RFC 8785 canonical JSON. */
function canonicalText(record: SealedRecord): string {
  const text = canonicalize({
    stream_id: record.stream_id, stream_version: record.stream_version, event_id: record.event_id.toLowerCase(), type: record.type,
    schema_version: record.schema_version, data: record.data ?? null, metadata: record.metadata ?? null, recorded_at: record.recorded_at,
  })
  if (text === undefined) throw new Error('an event has no JSON form')
  return text
}

/** The leaf's bytes: the record as RFC 8785 canonical JSON, UTF-8. */
export const leafBytes = (record: SealedRecord): Buffer => Buffer.from(canonicalText(record), 'utf8')

const LEAF_PREFIX = Buffer.from([0])

/** hashLeaf(leafBytes(record)) (RFC 9162: SHA-256 of 0x00 and the leaf), without the copy of the text. */
export const leafHashOf = (record: SealedRecord): Buffer =>
  createHash('sha256').update(LEAF_PREFIX).update(canonicalText(record), 'utf8').digest()

/** The sealed record of an event read as stored through the event store port. */
export interface StoredEventLike {
  id: string
  streamId: string
  streamVersion: number
  type: string
  schemaVersion: number
  data: unknown
  metadata: unknown
  recordedAt: Date
}

export const sealedRecordOf = (e: StoredEventLike): SealedRecord => ({
  stream_id: e.streamId, stream_version: e.streamVersion, event_id: e.id, type: e.type, schema_version: e.schemaVersion,
  data: e.data, metadata: e.metadata, recorded_at: e.recordedAt.toISOString(),
})
