import { type Kysely, sql } from 'kysely'

// Frozen once landed (issue 36): the notary's stream map (stream → its last leaf and version, a
// Merkle tree of 2^16 buckets: src/audit/stream-map.ts) as of its latest signed head, the map heads
// it signed, and what the notary's watchers read (refusals).
export async function up(db: Kysely<any>): Promise<void> {
  // One row per stream sealed: its last leaf as of the latest map head, and the entry hash.
  await sql`
    create table audit_stream_tips (
      stream_id text primary key,
      bucket integer not null,
      leaf_index bigint not null,
      stream_version bigint not null,
      entry bytea not null
    )`.execute(db)
  await sql`create index audit_stream_tips_bucket_idx on audit_stream_tips (bucket)`.execute(db)
  // The buckets' hashes (level 0) and the nodes from level 8 up; levels 1–7 are recomputed from the
  // 256 buckets of a proof's group, which keeps a head's writes to its buckets and ≤ 511 nodes.
  await sql`
    create table audit_map_nodes (
      level smallint not null,
      node_index integer not null,
      hash bytea not null,
      primary key (level, node_index)
    )`.execute(db)
  await sql`
    create table audit_map_heads (
      tree_size bigint primary key,
      tree_root bytea not null,
      map_root bytea not null,
      signature bytea not null,
      key_id text not null
    )`.execute(db)
  await sql`alter table audit_notary add column refusals bigint not null default 0`.execute(db)
  await sql`alter table audit_notary add column last_refusal text`.execute(db)
  await sql`alter table audit_notary add column last_refusal_at timestamptz`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_notary drop column last_refusal_at`.execute(db)
  await sql`alter table audit_notary drop column last_refusal`.execute(db)
  await sql`alter table audit_notary drop column refusals`.execute(db)
  await sql`drop table audit_map_heads`.execute(db)
  await sql`drop table audit_map_nodes`.execute(db)
  await sql`drop table audit_stream_tips`.execute(db)
}
