import { type Kysely, sql } from 'kysely'

// Frozen once landed: durable timers. A due timer is claimed with FOR UPDATE SKIP LOCKED and a
// lease, published on the bus, then marked fired; a firing process that dies leaves the lease to
// run out and another fires it again (at least once).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bus_timers (
      id text primary key,
      -- Bumped by every (re)schedule; part of the published message id.
      generation integer not null default 1,
      subject text not null,
      ordering_key text,
      data jsonb not null,
      headers jsonb not null default '{}'::jsonb,
      fire_at timestamptz not null,
      state text not null default 'scheduled',
      leased_until timestamptz,
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      fired_at timestamptz,
      constraint bus_timers_state_check check (state in ('scheduled', 'fired', 'cancelled'))
    )`.execute(db)
  await sql`create index bus_timers_due_idx on bus_timers (fire_at) where state = 'scheduled'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table bus_timers`.execute(db)
}
