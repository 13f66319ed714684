import { type Kysely, sql } from 'kysely'

// Frozen once landed: the notary's Merkle tree over the event log (RFC 9162), its signed tree heads
// and its single-writer lease. Outside the read-model schema: a rebuild never touches it.
export async function up(db: Kysely<any>): Promise<void> {
  // One row per sealed event, by its index in the tree (= its rank in commit order).
  await sql`
    create table audit_leaves (
      leaf_index bigint primary key,
      event_id uuid not null,
      stream_id text not null,
      stream_version bigint not null,
      leaf_hash bytea not null
    )`.execute(db)
  // A history with ?proof=true finds its stream's leaves here.
  await sql`create index audit_leaves_stream_idx on audit_leaves (stream_id, stream_version)`.execute(db)
  // Every complete subtree above the leaves (level ≥ 1): node i of level l covers leaves
  // [i·2^l, (i+1)·2^l). A proof reads at most 2·log2(n) of them, in one query.
  await sql`
    create table audit_tree_nodes (
      level smallint not null,
      node_index bigint not null,
      hash bytea not null,
      primary key (level, node_index)
    )`.execute(db)
  await sql`
    create table audit_tree_heads (
      tree_size bigint primary key,
      root_hash bytea not null,
      timestamp_ms bigint not null,
      signature bytea not null,
      key_id text not null
    )`.execute(db)
  await sql`
    create table audit_notary (
      name text primary key,
      tree_size bigint not null,
      checkpoint text not null,
      owner text,
      lease_until timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table audit_notary`.execute(db)
  await sql`drop table audit_tree_heads`.execute(db)
  await sql`drop table audit_tree_nodes`.execute(db)
  await sql`drop table audit_leaves`.execute(db)
}
