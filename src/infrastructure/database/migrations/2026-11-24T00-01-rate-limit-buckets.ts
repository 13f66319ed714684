import { type Kysely, sql } from 'kysely'

// Frozen once landed: per-token rate-limit buckets shared by every API process (DESIGN §5).
// UNLOGGED: a transaction that writes only unlogged tables writes no WAL, so its commit does not
// wait for a WAL flush, and this table is written on every authenticated request; after a crash
// PostgreSQL empties it, which only hands every token a full budget again. fillfactor leaves room
// on each page for the updated row version beside the old one (a HOT update: no index write).
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create unlogged table rate_limit_buckets (
      bucket text primary key,
      tokens double precision not null,
      updated_at timestamptz not null
    ) with (fillfactor = 50)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table rate_limit_buckets`.execute(db)
}
