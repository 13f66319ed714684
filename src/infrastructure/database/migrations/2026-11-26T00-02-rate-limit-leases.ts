import { type Kysely, sql } from 'kysely'

// Frozen once landed: API processes lease tokens from the shared buckets in chunks and spend them
// in memory (src/infrastructure/rate-limit/postgres-rate-limiter.ts); `granted` is what the last
// lease of a bucket handed out, returned by the same statement that took it.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limit_buckets add column granted double precision not null default 0`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table rate_limit_buckets drop column granted`.execute(db)
}
