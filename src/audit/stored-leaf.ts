import { createHash } from 'node:crypto'
import type { StoredForm } from '../infrastructure/event-store/event-store.js'
import { leafHashOf, sealedRecordOf, type StoredEventLike as StoredEventV1 } from './leaf.js'

/**
 * Leaf version 2 (issue 36): what the store returns, byte for byte. Version 1 (leaf.ts) sealed the
 * record as the port parsed it, so a `recorded_at` moved inside its millisecond or a jsonb number
 * beyond double precision changed nothing sealed; version 2 seals the jsonb columns' text and the
 * timestamp at its microsecond precision. Leaves sealed as version 1 stay as they were.
 *
 * The leaf: the byte 0x02, then the eight fields in this order, each as a 4-byte big-endian byte
 * length and its UTF-8 bytes (numbers in decimal): stream_id, stream_version, event_id (lower case),
 * type, schema_version, recorded_at (ISO 8601, six decimals, Z), data (the jsonb text), metadata (the
 * jsonb text); hashed as RFC 9162 leaves are, SHA-256(0x00 ‖ leaf). A version 1 leaf is JSON text,
 * which never starts with the byte 0x02.
 */
export interface StoredRecord {
  stream_id: string
  stream_version: number
  event_id: string
  type: string
  schema_version: number
  /** ISO 8601 with six decimals. */
  recorded_at: string
  /** The jsonb column's text, as PostgreSQL returns it. */
  data: string
  metadata: string
}

export const LEAF_V2 = 2

const lengthOf = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4)
  b.writeUInt32BE(n, 0)
  return b
}

const fieldsOf = (r: StoredRecord): string[] =>
  [r.stream_id, String(r.stream_version), r.event_id.toLowerCase(), r.type, String(r.schema_version), r.recorded_at, r.data, r.metadata]

/** The leaf's bytes. */
export function leafV2Bytes(r: StoredRecord): Buffer {
  const parts: Buffer[] = [Buffer.from([LEAF_V2])]
  for (const field of fieldsOf(r)) parts.push(lengthOf(Buffer.byteLength(field, 'utf8')), Buffer.from(field, 'utf8'))
  return Buffer.concat(parts)
}

const PREFIX = Buffer.from([0x00, LEAF_V2])

/** SHA-256(0x00 ‖ leafV2Bytes(r)), without the copy. */
export function leafV2Hash(r: StoredRecord): Buffer {
  const h = createHash('sha256').update(PREFIX)
  for (const field of fieldsOf(r)) h.update(lengthOf(Buffer.byteLength(field, 'utf8'))).update(field, 'utf8')
  return h.digest()
}

/** An event as read through the port as stored, with its stored form. */
export interface StoredEventLike {
  id: string
  streamId: string
  streamVersion: number
  type: string
  schemaVersion: number
  stored?: StoredForm | undefined
}

/** The stored record of an event, when its adapter gives the stored form (else it is sealed as version 1). */
export const storedRecordOf = (e: StoredEventLike): StoredRecord | undefined => (e.stored ? {
  stream_id: e.streamId, stream_version: e.streamVersion, event_id: e.id, type: e.type, schema_version: e.schemaVersion,
  recorded_at: e.stored.recordedAt, data: e.stored.data, metadata: e.stored.metadata,
} : undefined)

/** The leaf the notary seals for an event read as stored: version 2 where the adapter gives the stored form, else version 1. */
export const sealedLeafHash = (e: StoredEventLike & StoredEventV1): Buffer => {
  const record = storedRecordOf(e)
  return record ? leafV2Hash(record) : leafHashOf(sealedRecordOf(e))
}

/**
 * Which version of this event's leaf `leafHash` is (2 or 1), or undefined when neither: the event
 * changed since it was sealed. A leaf keeps the version it was sealed with.
 */
export function leafVersionOf(e: StoredEventLike & StoredEventV1, leafHash: Buffer): 1 | 2 | undefined {
  const record = storedRecordOf(e)
  if (record && leafV2Hash(record).equals(leafHash)) return 2
  return leafHashOf(sealedRecordOf(e)).equals(leafHash) ? 1 : undefined
}
