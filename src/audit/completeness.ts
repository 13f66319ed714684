import type { Kysely } from 'kysely'
import type { Static } from 'typebox'
import type { StreamCompleteness } from '../../schemas/api/audit.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { storedMapProof } from './map-store.js'
import { leafVersionOf } from './stored-leaf.js'
import { bucketOf } from './stream-map.js'

const b64 = (b: Buffer) => b.toString('base64')

/**
 * The stream map's proof for a history against the head of `treeSize`: undefined when no map head
 * was signed with it, or a newer one landed meanwhile (the caller takes the newer head and asks again).
 */
export async function completenessAt(db: Kysely<any>, streamId: string, treeSize: number): Promise<Static<typeof StreamCompleteness> | undefined> {
  const p = await storedMapProof(db, streamId, bucketOf(streamId), treeSize)
  if (!p) return undefined
  return {
    tree_size: p.head.treeSize, map_root: b64(p.head.mapRoot), signature: b64(p.head.signature), key_id: p.head.keyId,
    stream_events: p.tip?.streamVersion ?? 0, last_leaf_index: p.tip?.leafIndex ?? null,
    bucket: p.bucket, bucket_entries: [...p.entries].sort(Buffer.compare).map(b64), map_path: p.path.map(b64),
  }
}

/** A version 2 leaf's stored values, for the proof (a version 1 leaf shows none). */
export function sealedForm(raw: RecordedEvent | undefined, leafHash: Buffer) {
  if (!raw?.stored) return undefined
  // An event changed since it was sealed matches neither: shown as version 2, it fails verification as it should.
  if (leafVersionOf(raw, leafHash) === 1) return undefined
  return { leaf_version: 2 as const, recorded_at: raw.stored.recordedAt, data: raw.stored.data, metadata: raw.stored.metadata }
}
