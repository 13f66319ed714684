import type { KeyObject } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { mapHeadSignatureHolds } from './map-head.js'
import type { StoredRecord } from './stored-leaf.js'
import { bucketOf, entryHash, MAP_DEPTH, rootFromBucket } from './stream-map.js'

/** Offline checks of a history's leaf version 2 forms and of its completeness (issue 36). No I/O. */

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const b64 = (v: unknown): Buffer | undefined => (typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v) ? Buffer.from(v, 'base64') : undefined)

/**
 * A version 2 proof's stored record, and every way the event as shown departs from it (the shown
 * payload must be the stored text's parse, or the upcast one's stored payload; the shown time the
 * stored one at the millisecond). A string: the `sealed` block is malformed.
 */
export function storedRecordFrom(item: Json, proof: Json, sealed: Json): { record: StoredRecord; departures: string[] } | string {
  const { recorded_at: at, data, metadata } = sealed
  if (typeof at !== 'string' || typeof data !== 'string' || typeof metadata !== 'string') return 'its proof\'s `sealed` block is malformed (recorded_at, data, metadata)'
  const stored = isObject(proof.stored) ? proof.stored : undefined
  const record: StoredRecord = {
    stream_id: String(proof.stream_id), stream_version: Number(item.stream_version), event_id: String(proof.event_id),
    type: String(stored?.type ?? item.type), schema_version: Number(stored?.schema_version ?? proof.schema_version),
    recorded_at: at, data, metadata,
  }
  const departures: string[] = []
  const parsed = (text: string) => { try { return { value: JSON.parse(text) as unknown } } catch { return undefined } }
  const d = parsed(data)
  if (!d || !isDeepStrictEqual(d.value, stored ? stored.data : item.data)) departures.push('its shown data is not the sealed stored data')
  const m = parsed(metadata)
  if (!m || !isDeepStrictEqual(m.value, item.metadata)) departures.push('its shown metadata is not the sealed stored metadata')
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(at) || item.recorded_at !== `${at.slice(0, 23)}Z`) {
    departures.push(`its shown recorded_at ${String(item.recorded_at)} is not the sealed ${at}`)
  }
  return { record, departures }
}

export interface ShownEvent { version: number; leafIndex: number | undefined }

/**
 * The history against its stream map proof: the map head signed with the tree head, the stream's
 * entry in its bucket, the bucket up to the map's root, and the shown events against the entry: a
 * history that leaves out the stream's last events as of the head fails here. Problems, or none.
 */
export function completenessProblems(doc: Json, streamId: string | undefined, head: { size: number; root: Buffer }, shown: ShownEvent[], publicKey: KeyObject): string[] {
  const c = isObject(doc.completeness) ? doc.completeness : undefined
  if (!c) return ['not proven complete: the history has no stream map proof (`completeness`), so events after the last one shown may have been left out; export it again']
  if (streamId === undefined) return ['not proven complete: the history names no stream']
  const mapRoot = b64(c.map_root)
  const signature = b64(c.signature)
  const entries = Array.isArray(c.bucket_entries) ? c.bucket_entries.map(b64) : undefined
  const path = Array.isArray(c.map_path) ? c.map_path.map(b64) : undefined
  const k = c.stream_events
  const last = c.last_leaf_index
  if (!mapRoot || !signature || !entries?.every((e): e is Buffer => e?.length === 32) || !path || path.length !== MAP_DEPTH || !path.every((p): p is Buffer => p?.length === 32)
    || typeof k !== 'number' || typeof c.bucket !== 'number' || c.tree_size !== head.size) {
    return ['not proven complete: its stream map proof is malformed or for another tree head']
  }
  if (!mapHeadSignatureHolds({ treeSize: head.size, treeRoot: head.root, mapRoot }, signature, publicKey)) {
    return [`not proven complete: the stream map head's signature (tree size ${head.size}) does not hold under this public key`]
  }
  if (c.bucket !== bucketOf(streamId)) return [`not proven complete: bucket ${String(c.bucket)} is not the stream's (${bucketOf(streamId)})`]
  const e = entries as Buffer[]
  if (e.some((x, i) => i > 0 && Buffer.compare(e[i - 1]!, x) >= 0)) return ['not proven complete: the bucket\'s entries are not in ascending order']
  if (!rootFromBucket(c.bucket, e, path as Buffer[])?.equals(mapRoot)) return ['not proven complete: the bucket does not lead to the signed stream map root']
  const problems: string[] = []
  if (k === 0 || typeof last !== 'number') {
    if (shown.some((s) => s.leafIndex !== undefined)) problems.push('the stream map says the stream had no sealed event, yet the history proves some')
    else problems.push('not proven complete: the stream had no sealed event as of the tree head')
    return problems
  }
  if (!e.some((x) => x.equals(entryHash(streamId, { leafIndex: last, streamVersion: k })))) {
    return [`not proven complete: the stream map holds no entry of ${k} events ending at leaf ${last} for this stream`]
  }
  const most = shown.reduce((m, s) => Math.max(m, s.version), 0)
  if (most < k) {
    problems.push(`the stream had ${k} events as of the tree head of size ${head.size} (its last sealed at leaf ${last}), the history shows ${most}: `
      + `version${k - most > 1 ? `s ${most + 1}–${k} were` : ` ${k} was`} left out (a dropped tail)`)
  } else if (most > k) {
    problems.push(`the stream had ${k} events as of the tree head of size ${head.size}, yet the history shows version ${most}`)
  } else if (shown.find((s) => s.version === k)?.leafIndex !== last) {
    problems.push(`the stream's last event as of the tree head is at leaf ${last}, not the shown version ${k}'s leaf`)
  }
  return problems
}
