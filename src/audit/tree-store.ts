import { type Kysely, sql } from 'kysely'
import type { NodeId } from './merkle.js'
import type { TreeHead } from './tree-head.js'
import { type MapCommit, mapCommitWrites } from './map-store.js'

/** The notary's tables (migration 2026-11-26T00-80): plain functions over a Kysely handle. */

export interface LeafRow {
  leafIndex: number
  eventId: string
  streamId: string
  streamVersion: number
  leafHash: Buffer
}

export interface SignedHead extends TreeHead {
  signature: Buffer
  keyId: string
}

const bytes = (v: Uint8Array): Buffer => Buffer.from(v)
const hex = (b: Buffer) => b.toString('hex')

export const nodeKey = ({ level, index }: NodeId): string => `${level}/${index}`

/** The hashes of these subtrees (leaves at level 0) in one query, keyed by nodeKey; absent ones are missing. */
export async function nodeHashes(db: Kysely<any>, nodes: NodeId[]): Promise<Map<string, Buffer>> {
  const unique = [...new Map(nodes.map((n) => [nodeKey(n), n])).values()]
  const leaves = unique.filter((n) => n.level === 0).map((n) => n.index)
  const inner = unique.filter((n) => n.level > 0)
  const out = new Map<string, Buffer>()
  if (unique.length === 0) return out
  const r = await sql<{ level: number; node_index: number | string; hash: Uint8Array }>`
    select 0 as level, leaf_index as node_index, leaf_hash as hash from audit_leaves where leaf_index = any(${leaves}::bigint[])
    union all
    select n.level, n.node_index, n.hash from audit_tree_nodes n
      join unnest(${inner.map((n) => n.level)}::smallint[], ${inner.map((n) => n.index)}::bigint[]) as w(level, node_index)
        on n.level = w.level and n.node_index = w.node_index`.execute(db)
  for (const row of r.rows) out.set(nodeKey({ level: Number(row.level), index: Number(row.node_index) }), bytes(row.hash))
  return out
}

type LeafSqlRow = { leaf_index: number | string; event_id: string; stream_id: string; stream_version: number | string; leaf_hash: Uint8Array }
const leafOf = (r: LeafSqlRow): LeafRow => ({
  leafIndex: Number(r.leaf_index), eventId: r.event_id, streamId: r.stream_id, streamVersion: Number(r.stream_version), leafHash: bytes(r.leaf_hash),
})

/** Every sealed leaf of one stream, in stream order. */
export async function leavesOfStream(db: Kysely<any>, streamId: string): Promise<LeafRow[]> {
  const r = await sql<LeafSqlRow>`
    select leaf_index, event_id::text as event_id, stream_id, stream_version, leaf_hash
    from audit_leaves where stream_id = ${streamId} order by stream_version, leaf_index`.execute(db)
  return r.rows.map(leafOf)
}

/** Leaves from an index on, in tree order (the check walks the whole tree in pages). */
export async function leavesFrom(db: Kysely<any>, fromIndex: number, limit: number): Promise<LeafRow[]> {
  const r = await sql<LeafSqlRow>`
    select leaf_index, event_id::text as event_id, stream_id, stream_version, leaf_hash
    from audit_leaves where leaf_index >= ${fromIndex} order by leaf_index limit ${limit}`.execute(db)
  return r.rows.map(leafOf)
}

type HeadSqlRow = { tree_size: number | string; root_hash: Uint8Array; timestamp_ms: number | string; signature: Uint8Array; key_id: string }
const headOf = (r: HeadSqlRow): SignedHead => ({
  treeSize: Number(r.tree_size), rootHash: bytes(r.root_hash), timestamp: Number(r.timestamp_ms), signature: bytes(r.signature), keyId: r.key_id,
})

export async function latestHead(db: Kysely<any>): Promise<SignedHead | undefined> {
  const r = await sql<HeadSqlRow>`select * from audit_tree_heads order by tree_size desc limit 1`.execute(db)
  return r.rows[0] ? headOf(r.rows[0]) : undefined
}

export async function headOfSize(db: Kysely<any>, size: number): Promise<SignedHead | undefined> {
  const r = await sql<HeadSqlRow>`select * from audit_tree_heads where tree_size = ${size}`.execute(db)
  return r.rows[0] ? headOf(r.rows[0]) : undefined
}

/** Every signed head, oldest first (the check verifies each against the recomputed tree). */
export async function allHeads(db: Kysely<any>): Promise<SignedHead[]> {
  const r = await sql<HeadSqlRow>`select * from audit_tree_heads order by tree_size`.execute(db)
  return r.rows.map(headOf)
}

/** Takes the lease if free or lapsed, renews it if ours; the row's state, or undefined when another notary holds it. */
export async function acquireNotaryLease(db: Kysely<any>, name: string, owner: string, leaseMs: number, startPosition: string): Promise<{ treeSize: number; checkpoint: string } | undefined> {
  const r = await sql<{ tree_size: number | string; checkpoint: string }>`
    insert into audit_notary (name, tree_size, checkpoint, owner, lease_until)
    values (${name}, 0, ${startPosition}, ${owner}, clock_timestamp() + make_interval(secs => ${leaseMs / 1000}::float8))
    on conflict (name) do update
      set owner = excluded.owner, lease_until = excluded.lease_until, updated_at = now()
      where audit_notary.owner = excluded.owner or audit_notary.owner is null or audit_notary.lease_until < clock_timestamp()
    returning tree_size, checkpoint`.execute(db)
  const row = r.rows[0]
  return row ? { treeSize: Number(row.tree_size), checkpoint: row.checkpoint } : undefined
}

/**
 * One batch in one statement (one round trip, one implicit transaction): the compare-and-set of the
 * notary's row, fenced by owner, lease and size, and, only when it moved, the leaves, the subtrees
 * they completed and the head (and the stream map's commit with it). False when this notary no longer holds the lease: nothing was written.
 */
export async function sealBatch(db: Kysely<any>, move: { name: string; owner: string; leaseMs: number; from: number; to: number; checkpoint: string },
  leaves: LeafRow[], nodes: { node: NodeId; hash: Buffer }[], head: SignedHead | undefined, map?: MapCommit): Promise<boolean> {
  const r = await sql<{ moved: number }>`
    with moved as (
      update audit_notary
      set tree_size = ${move.to}, checkpoint = ${move.checkpoint}, lease_until = clock_timestamp() + make_interval(secs => ${move.leaseMs / 1000}::float8), updated_at = now()
      where name = ${move.name} and owner = ${move.owner} and tree_size = ${move.from} and lease_until >= clock_timestamp()
      returning 1
    ), sealed_leaves as (
      insert into audit_leaves (leaf_index, event_id, stream_id, stream_version, leaf_hash)
      select i, e, s, v, decode(h, 'hex')
      from unnest(${leaves.map((l) => l.leafIndex)}::bigint[], ${leaves.map((l) => l.eventId)}::uuid[], ${leaves.map((l) => l.streamId)}::text[],
        ${leaves.map((l) => l.streamVersion)}::bigint[], ${leaves.map((l) => hex(l.leafHash))}::text[]) as u(i, e, s, v, h)
      where exists (select from moved)
    ), sealed_nodes as (
      insert into audit_tree_nodes (level, node_index, hash)
      select l, i, decode(h, 'hex')
      from unnest(${nodes.map((n) => n.node.level)}::smallint[], ${nodes.map((n) => n.node.index)}::bigint[], ${nodes.map((n) => hex(n.hash))}::text[]) as u(l, i, h)
      where exists (select from moved)
    ), signed as (
      insert into audit_tree_heads (tree_size, root_hash, timestamp_ms, signature, key_id)
      select ${head?.treeSize ?? 0}, decode(${head ? hex(head.rootHash) : ''}, 'hex'), ${head?.timestamp ?? 0}, decode(${head ? hex(head.signature) : ''}, 'hex'), ${head?.keyId ?? ''}
      where ${head !== undefined} and exists (select from moved)
      on conflict (tree_size) do nothing
    )${mapCommitWrites(map)}
    select count(*)::int as moved from moved`.execute(db)
  return Number(r.rows[0]?.moved ?? 0) === 1
}

export async function releaseNotaryLease(db: Kysely<any>, name: string, owner: string): Promise<void> {
  await sql`update audit_notary set owner = null, lease_until = null where name = ${name} and owner = ${owner}`.execute(db)
}
