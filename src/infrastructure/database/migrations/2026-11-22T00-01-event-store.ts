import { type Kysely, sql } from 'kysely'

// Frozen once landed: schema of the PostgreSQL event store (DESIGN §2).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table es_streams (
      stream_id text primary key,
      stream_type text not null,
      version bigint not null,
      metadata jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`
    create table es_events (
      global_position bigint generated always as identity primary key,
      transaction_id xid8 not null default pg_current_xact_id(),
      stream_id text not null,
      stream_version bigint not null,
      event_id uuid not null,
      type text not null,
      schema_version integer not null default 1,
      data jsonb not null,
      metadata jsonb not null,
      recorded_at timestamptz not null default clock_timestamp(),
      constraint es_events_stream_version_key unique (stream_id, stream_version),
      constraint es_events_event_id_key unique (event_id)
    )`.execute(db)
  // The read-all query orders by (transaction_id, global_position); without this index it scans (DESIGN §6).
  await sql`create index es_events_tx_position_idx on es_events (transaction_id, global_position)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table es_events`.execute(db)
  await sql`drop table es_streams`.execute(db)
}
