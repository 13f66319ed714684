import { type Kysely, sql } from 'kysely'

// Frozen once landed: the in-process bus (the embedded default when NATS_URL is unset).
// bus_messages is its log; bus_deliveries holds one row per (consumer, message) until acknowledged,
// so a crash loses nothing and a redelivery is a row whose lease ran out or whose delay passed.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bus_messages (
      seq bigint generated always as identity primary key,
      message_id text not null,
      subject text not null,
      ordering_key text,
      data jsonb not null,
      headers jsonb not null default '{}'::jsonb,
      published_at timestamptz not null default clock_timestamp(),
      constraint bus_messages_message_id_key unique (message_id)
    )`.execute(db)
  await sql`create index bus_messages_published_at_idx on bus_messages (published_at)`.execute(db)
  await sql`
    create table bus_consumers (
      name text primary key,
      subjects text[] not null,
      subject_pattern text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db)
  await sql`
    create table bus_deliveries (
      consumer text not null references bus_consumers (name) on delete cascade,
      seq bigint not null,
      ordering_key text,
      attempts integer not null default 0,
      available_at timestamptz not null default clock_timestamp(),
      leased_until timestamptz,
      last_error text,
      primary key (consumer, seq)
    )`.execute(db)
  // Claims scan the primary key (consumer, seq) in order; these two answer "when is the next one due".
  await sql`create index bus_deliveries_due_idx on bus_deliveries (consumer, available_at) where leased_until is null`.execute(db)
  await sql`create index bus_deliveries_leased_idx on bus_deliveries (consumer, leased_until) where leased_until is not null`.execute(db)
  // Ordered consumers only take the oldest pending row of each key.
  await sql`create index bus_deliveries_key_idx on bus_deliveries (consumer, ordering_key, seq) where ordering_key is not null`.execute(db)
  await sql`create index bus_deliveries_seq_idx on bus_deliveries (seq)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table bus_deliveries`.execute(db)
  await sql`drop table bus_consumers`.execute(db)
  await sql`drop table bus_messages`.execute(db)
}
