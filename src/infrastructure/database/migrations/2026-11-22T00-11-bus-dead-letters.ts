import { type Kysely, sql } from 'kysely'

// Frozen once landed: dead letters and per-consumer counters, shared by both bus adapters.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bus_dead_letters (
      id bigint generated always as identity primary key,
      consumer text not null,
      message_id text not null,
      -- The adapter's id of this copy (NATS stream sequence, in-process seq): a dead letter recorded
      -- twice for one copy (its settle was lost) stays one row.
      transport_ref text not null,
      subject text not null,
      ordering_key text,
      data jsonb not null,
      headers jsonb not null default '{}'::jsonb,
      deliveries integer not null,
      reason text not null,
      error text,
      published_at timestamptz,
      dead_at timestamptz not null default now(),
      replayed_at timestamptz,
      constraint bus_dead_letters_copy_key unique (consumer, transport_ref)
    )`.execute(db)
  await sql`create index bus_dead_letters_open_idx on bus_dead_letters (consumer, id) where replayed_at is null`.execute(db)
  await sql`
    create table bus_consumer_stats (
      consumer text primary key,
      redeliveries bigint not null default 0,
      updated_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table bus_consumer_stats`.execute(db)
  await sql`drop table bus_dead_letters`.execute(db)
}
