import { type Kysely, sql } from 'kysely'
import { IDLE_FORGET_MS, type RateLimiter, type Taken } from './rate-limiter.js'

/**
 * Buckets in the table `rate_limit_buckets` (migration 2026-11-24T00-01), shared by every API
 * process: one statement per request refills the bucket by the time elapsed, takes a token if there
 * is one, and returns what is left. Time is the caller's (the platform's clock), so every process
 * and the tests agree on one notion of it; a clock behind the stored one refills nothing.
 */
export class PostgresRateLimiter implements RateLimiter {
  readonly kind = 'postgres'
  constructor(private readonly db: Kysely<any>) {}

  async take(bucket: string, limit: number, now: Date): Promise<Taken> {
    // The refilled level, capped at the limit: `limit / 60` tokens a second, in numeric (extract's
    // own type, exact) so that whole tokens come out whole, as in token-bucket.ts.
    const refilled = sql`least(${limit}::float8, b.tokens + (greatest(0, extract(epoch from ${now}::timestamptz - b.updated_at)) * ${limit}::int / 60)::float8)`
    // A refused request fails the WHERE: the row is left as it was (nothing written) and no row
    // comes back. A first request inserts a full bucket less the token it takes.
    const r = await sql<{ tokens: number }>`
      insert into rate_limit_buckets as b (bucket, tokens, updated_at)
      values (${bucket}, ${limit}::float8 - 1, ${now}::timestamptz)
      on conflict (bucket) do update
        set tokens = ${refilled} - 1, updated_at = greatest(b.updated_at, excluded.updated_at)
        where ${refilled} >= 1
      returning tokens`.execute(this.db)
    const row = r.rows[0]
    if (row) return { allowed: true, remaining: Math.floor(row.tokens) }
    // The bucket held less than one token: one more arrives within 60 / limit seconds.
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(60 / limit)) }
  }

  async forgetIdle(now: Date): Promise<void> {
    // No index on updated_at, so that the per-request update stays a HOT update: the table holds
    // one row per token active in the last two minutes, and a scan a minute is cheap.
    await sql`delete from rate_limit_buckets where updated_at < ${now}::timestamptz - make_interval(secs => ${IDLE_FORGET_MS / 1000})`.execute(this.db)
  }
}
