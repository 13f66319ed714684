import type { Kysely } from 'kysely'
import { signMapHead } from './map-head.js'
import { entriesOfBuckets, latestMapHead, loadMapTree, type MapCommit, tipsSince } from './map-store.js'
import { bucketHash, bucketOf, entryHash, type MapTree, type StreamTip } from './stream-map.js'
import type { NotaryKey } from './tree-head.js'
import type { SignedHead } from './tree-store.js'

/** The notary's stream map: as of its last map head, and the tips of the streams sealed since. */
export interface MapState {
  tree: MapTree
  dirty: Map<string, StreamTip>
}

/**
 * The map as stored, checked against the last signed map head (a string says why it does not
 * hold: the notary refuses to sign over it), with the streams sealed after that head.
 */
export async function loadMapState(db: Kysely<any>): Promise<MapState | string> {
  const [last, tree] = await Promise.all([latestMapHead(db), loadMapTree(db)])
  if (last && !tree.root().equals(last.mapRoot)) return `the stored stream map is not the one signed at tree size ${last.treeSize}`
  return { tree, dirty: await tipsSince(db, last?.treeSize ?? 0) }
}

/**
 * The stream tips sealed since the last map head, folded into the map: the stored entries of their
 * buckets read, theirs replaced, the buckets and the nodes above recomputed, and the map head
 * signed over the tree head. The state moves on at once (as the notary's tree does); a write that
 * does not hold makes the notary load it again.
 */
export async function mapCommitOf(db: Kysely<any>, state: MapState, head: SignedHead, key: NotaryKey): Promise<MapCommit> {
  const tips = [...state.dirty].map(([streamId, tip]) => ({ streamId, bucket: bucketOf(streamId), tip, entry: entryHash(streamId, tip) }))
  const buckets = new Map<number, Map<string, Buffer>>()
  for (const t of tips) buckets.set(t.bucket, new Map())
  for (const e of await entriesOfBuckets(db, [...buckets.keys()])) buckets.get(e.bucket)!.set(e.streamId, e.entry)
  for (const t of tips) buckets.get(t.bucket)!.set(t.streamId, t.entry)
  const nodes = state.tree.setBuckets(new Map([...buckets].map(([b, entries]) => [b, bucketHash([...entries.values()])])))
  state.dirty = new Map()
  const mapHead = { treeSize: head.treeSize, treeRoot: head.rootHash, mapRoot: state.tree.root() }
  return { tips, nodes, head: { ...mapHead, signature: signMapHead(mapHead, key.privateKey), keyId: key.keyId } }
}
