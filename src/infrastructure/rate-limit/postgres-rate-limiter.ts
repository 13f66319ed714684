import { type Kysely, sql } from 'kysely'
import { IDLE_FORGET_MS, type RateLimiter, type Taken } from './rate-limiter.js'

/** Tokens a process leases at once: a fiftieth of the limit (so a request costs a write only every so many). */
export const leaseSize = (limit: number): number => Math.max(1, Math.ceil(limit / 50))

interface Local {
  /** Leased tokens not spent yet. */
  tokens: number
  /** The shared bucket's level after this process's last lease (what other processes may still take). */
  shared: number
  /** A lease on its way (every request short of tokens waits for the same one). */
  leasing: Promise<void> | undefined
  /** Requests waiting for a token: the next lease asks for at least as many. */
  waiting: number
  /** The shared bucket was empty: refused here, without asking, until then (ms). */
  emptyUntil: number
  at: number
}

/**
 * Buckets in the table `rate_limit_buckets`, shared by every API process, spent in memory: a process
 * leases a chunk of a bucket's tokens (`leaseSize`) with one statement and hands them out to
 * requests without a round trip, leasing the next chunk before this one runs out. A request waits
 * for the database only when its process holds no token of the bucket (a fresh or an exhausted one);
 * an empty shared bucket is answered from memory until its next token is due. Across processes the
 * limit holds to within one chunk per process (tokens one process leased and another could have
 * used); with a single process, or a chunk of 1 (a limit of 50 a minute or less), it is exact.
 * Time is the caller's (the platform's clock); a clock behind the stored one refills nothing.
 */
export class PostgresRateLimiter implements RateLimiter {
  readonly kind = 'postgres'
  private readonly buckets = new Map<string, Local>()

  constructor(private readonly db: Kysely<any>) {}

  async take(bucket: string, limit: number, now: Date): Promise<Taken> {
    const chunk = leaseSize(limit)
    let local = this.buckets.get(bucket)
    if (!local) this.buckets.set(bucket, local = { tokens: 0, shared: limit, leasing: undefined, waiting: 0, emptyUntil: 0, at: 0 })
    local.at = Math.max(local.at, now.getTime())
    // Each lease grants a token or finds the bucket empty (emptyUntil moves on): the loop ends.
    while (local.tokens < 1) {
      if (now.getTime() < local.emptyUntil) return this.refused(local, limit, now)
      local.waiting++
      try {
        await (local.leasing ??= this.lease(bucket, local, limit, Math.max(chunk, local.waiting), now))
      } finally {
        local.waiting--
      }
    }
    local.tokens--
    // Half a chunk left: the next one is leased beside the requests, not in front of one.
    if (chunk > 1 && local.tokens < chunk / 2 && !local.leasing && local.shared >= 1) {
      local.leasing = this.lease(bucket, local, limit, chunk, now)
      local.leasing.catch(() => undefined)
    }
    return { allowed: true, remaining: Math.floor(local.tokens + local.shared) }
  }

  private refused(local: Local, limit: number, now: Date): Taken {
    const waitMs = Math.max(local.emptyUntil - now.getTime(), 60_000 / limit)
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) }
  }

  /**
   * One statement: refills the shared bucket by the time elapsed, takes up to `n` whole tokens
   * (fewer when it holds fewer) and returns what it took and what is left. Multiplied before
   * dividing, as token-bucket.ts does, so that whole tokens come out whole.
   */
  private async lease(bucket: string, local: Local, limit: number, n: number, now: Date): Promise<void> {
    try {
      const refilled = sql`least(${limit}::float8, b.tokens + (greatest(0, extract(epoch from ${now}::timestamptz - b.updated_at)) * ${limit}::int / 60)::float8)`
      const r = await sql<{ tokens: number; granted: number }>`
        insert into rate_limit_buckets as b (bucket, tokens, updated_at, granted)
        values (${bucket}, ${limit}::float8 - least(${n}::int, ${limit}::int), ${now}::timestamptz, least(${n}::int, ${limit}::int))
        on conflict (bucket) do update
          set tokens = ${refilled} - least(${n}::float8, floor(${refilled})), granted = least(${n}::float8, floor(${refilled})),
              updated_at = greatest(b.updated_at, excluded.updated_at)
        returning tokens, granted`.execute(this.db)
      const row = r.rows[0]!
      local.tokens += Number(row.granted)
      local.shared = Number(row.tokens)
      // Nothing granted: the next token is due when the level reaches one.
      if (Number(row.granted) < 1) local.emptyUntil = now.getTime() + Math.ceil(((1 - local.shared) * 60_000) / limit)
    } finally {
      local.leasing = undefined
    }
  }

  async forgetIdle(now: Date): Promise<void> {
    const before = now.getTime() - IDLE_FORGET_MS
    for (const [k, b] of this.buckets) if (b.at < before && !b.leasing) this.buckets.delete(k)
    // No index on updated_at, so that the lease's update stays a HOT update: the table holds one
    // row per token active in the last two minutes, and a scan a minute is cheap.
    await sql`delete from rate_limit_buckets where updated_at < ${now}::timestamptz - make_interval(secs => ${IDLE_FORGET_MS / 1000})`.execute(this.db)
  }
}
