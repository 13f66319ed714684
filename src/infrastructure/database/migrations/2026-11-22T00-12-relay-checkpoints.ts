import { type Kysely, sql } from 'kysely'

// Frozen once landed: the relay's checkpoint in the event log and its leadership lease.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table bus_relay_checkpoints (
      name text primary key,
      checkpoint text not null,
      owner text,
      lease_until timestamptz,
      updated_at timestamptz not null default now()
    )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table bus_relay_checkpoints`.execute(db)
}
