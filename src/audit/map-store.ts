import { type Kysely, sql } from 'kysely'
import type { SignedMapHead } from './map-head.js'
import { emptyNode, MAP_DEPTH, type MapNode, MapTree, pathNodes, type StreamTip } from './stream-map.js'

/** The stream map's tables (migration 2026-11-29T00-86): plain functions over a Kysely handle. */

const bytes = (v: Uint8Array): Buffer => Buffer.from(v)
const hex = (b: Buffer) => b.toString('hex')

/** The levels stored: the buckets and the nodes from this level up (the rest is recomputed from 256 buckets). */
export const STORED_FROM_LEVEL = 8
export const isStoredLevel = (level: number): boolean => level === 0 || level >= STORED_FROM_LEVEL

/** The whole stored map, levels 1–7 recomputed: the notary's copy as it takes the lease. */
export async function loadMapTree(db: Kysely<any>): Promise<MapTree> {
  const r = await sql<{ node_index: number; hash: Uint8Array }>`select node_index, hash from audit_map_nodes where level = 0`.execute(db)
  const tree = new MapTree()
  tree.setBuckets(new Map(r.rows.map((row) => [Number(row.node_index), bytes(row.hash)])))
  return tree
}

/** The stored entries of these buckets, by stream. */
export async function entriesOfBuckets(db: Kysely<any>, buckets: number[]): Promise<{ streamId: string; bucket: number; entry: Buffer }[]> {
  if (buckets.length === 0) return []
  const r = await sql<{ stream_id: string; bucket: number; entry: Uint8Array }>`
    select stream_id, bucket, entry from audit_stream_tips where bucket = any(${buckets}::int[])`.execute(db)
  return r.rows.map((row) => ({ streamId: row.stream_id, bucket: Number(row.bucket), entry: bytes(row.entry) }))
}

/** Each stream's last leaf from this index on (the streams a map head has not taken in yet). */
export async function tipsSince(db: Kysely<any>, fromIndex: number): Promise<Map<string, StreamTip>> {
  const r = await sql<{ stream_id: string; leaf_index: number | string; stream_version: number | string }>`
    select distinct on (stream_id) stream_id, leaf_index, stream_version
    from audit_leaves where leaf_index >= ${fromIndex} order by stream_id, leaf_index desc`.execute(db)
  return new Map(r.rows.map((row) => [row.stream_id, { leafIndex: Number(row.leaf_index), streamVersion: Number(row.stream_version) }]))
}

type MapHeadRow = { tree_size: number | string; tree_root: Uint8Array; map_root: Uint8Array; signature: Uint8Array; key_id: string }
const mapHeadOf = (r: MapHeadRow): SignedMapHead => ({
  treeSize: Number(r.tree_size), treeRoot: bytes(r.tree_root), mapRoot: bytes(r.map_root), signature: bytes(r.signature), keyId: r.key_id,
})

export async function latestMapHead(db: Kysely<any>): Promise<SignedMapHead | undefined> {
  const r = await sql<MapHeadRow>`select * from audit_map_heads order by tree_size desc limit 1`.execute(db)
  return r.rows[0] ? mapHeadOf(r.rows[0]) : undefined
}

export async function allMapHeads(db: Kysely<any>): Promise<SignedMapHead[]> {
  const r = await sql<MapHeadRow>`select * from audit_map_heads order by tree_size`.execute(db)
  return r.rows.map(mapHeadOf)
}

/** What a map head writes beside its batch: the streams' new tips, the nodes that changed, the signed head. */
export interface MapCommit {
  tips: { streamId: string; bucket: number; tip: StreamTip; entry: Buffer }[]
  nodes: MapNode[]
  head: SignedMapHead
}

/** The CTEs of sealBatch's statement that write a map commit, only when `moved` (the lease's compare-and-set) held. */
export function mapCommitWrites(commit: MapCommit | undefined) {
  if (!commit) return sql``
  const tips = commit?.tips ?? []
  const nodes = (commit?.nodes ?? []).filter((n) => isStoredLevel(n.level))
  const head = commit?.head
  return sql`, map_tips as (
      insert into audit_stream_tips (stream_id, bucket, leaf_index, stream_version, entry)
      select s, b, i, v, decode(e, 'hex')
      from unnest(${tips.map((t) => t.streamId)}::text[], ${tips.map((t) => t.bucket)}::int[], ${tips.map((t) => t.tip.leafIndex)}::bigint[],
        ${tips.map((t) => t.tip.streamVersion)}::bigint[], ${tips.map((t) => hex(t.entry))}::text[]) as u(s, b, i, v, e)
      where exists (select from moved)
      on conflict (stream_id) do update set bucket = excluded.bucket, leaf_index = excluded.leaf_index, stream_version = excluded.stream_version, entry = excluded.entry
    ), map_nodes as (
      insert into audit_map_nodes (level, node_index, hash)
      select l, i, decode(h, 'hex')
      from unnest(${nodes.map((n) => n.level)}::smallint[], ${nodes.map((n) => n.index)}::int[], ${nodes.map((n) => hex(n.hash))}::text[]) as u(l, i, h)
      where exists (select from moved)
      on conflict (level, node_index) do update set hash = excluded.hash
    ), map_head as (
      insert into audit_map_heads (tree_size, tree_root, map_root, signature, key_id)
      select ${head?.treeSize ?? 0}, decode(${head ? hex(head.treeRoot) : ''}, 'hex'), decode(${head ? hex(head.mapRoot) : ''}, 'hex'),
        decode(${head ? hex(head.signature) : ''}, 'hex'), ${head?.keyId ?? ''}
      where ${head !== undefined} and exists (select from moved)
      on conflict (tree_size) do nothing
    )`
}

/** One stream's map proof as the tables hold it now (the latest map head): its tip, its bucket's entries, the path up. */
export interface StoredMapProof {
  head: SignedMapHead
  tip: StreamTip | undefined
  bucket: number
  entries: Buffer[]
  path: Buffer[]
}

/**
 * Read in one snapshot, so the tips, nodes and head agree: undefined when no map head was signed
 * at `treeSize` as the latest one (a newer head landed: ask again with it).
 */
export async function storedMapProof(db: Kysely<any>, streamId: string, bucket: number, treeSize: number): Promise<StoredMapProof | undefined> {
  return db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const head = await latestMapHead(trx)
    if (!head || head.treeSize !== treeSize) return undefined
    const group = bucket - (bucket % 2 ** STORED_FROM_LEVEL)
    const upper = pathNodes(bucket).filter((n) => n.level >= STORED_FROM_LEVEL)
    const [tip, entries, nodes] = await Promise.all([
      sql<{ leaf_index: number | string; stream_version: number | string }>`select leaf_index, stream_version from audit_stream_tips where stream_id = ${streamId}`.execute(trx),
      sql<{ entry: Uint8Array }>`select entry from audit_stream_tips where bucket = ${bucket}`.execute(trx),
      sql<{ level: number; node_index: number; hash: Uint8Array }>`
        select level, node_index, hash from audit_map_nodes
        where (level = 0 and node_index >= ${group} and node_index < ${group + 2 ** STORED_FROM_LEVEL})
           or (level, node_index) in (select * from unnest(${upper.map((n) => n.level)}::smallint[], ${upper.map((n) => n.index)}::int[]))`.execute(trx),
    ])
    const tree = new MapTree()
    tree.setBuckets(new Map(nodes.rows.filter((n) => Number(n.level) === 0).map((n) => [Number(n.node_index), bytes(n.hash)])))
    const stored = new Map(nodes.rows.filter((n) => Number(n.level) > 0).map((n) => [`${n.level}/${n.node_index}`, bytes(n.hash)]))
    const path = pathNodes(bucket).map((n) => (n.level >= STORED_FROM_LEVEL ? stored.get(`${n.level}/${n.index}`) ?? emptyNode(n.level) : tree.node(n.level, n.index)))
    const row = tip.rows[0]
    return {
      head, bucket, entries: entries.rows.map((e) => bytes(e.entry)), path: path.slice(0, MAP_DEPTH),
      tip: row ? { leafIndex: Number(row.leaf_index), streamVersion: Number(row.stream_version) } : undefined,
    }
  })
}

/** The stored map nodes, for the check against the map recomputed from the leaves. */
export async function storedMapNodes(db: Kysely<any>): Promise<MapNode[]> {
  const r = await sql<{ level: number; node_index: number; hash: Uint8Array }>`select level, node_index, hash from audit_map_nodes`.execute(db)
  return r.rows.map((n) => ({ level: Number(n.level), index: Number(n.node_index), hash: bytes(n.hash) }))
}
