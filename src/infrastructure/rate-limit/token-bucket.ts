import type { Taken } from './rate-limiter.js'

/** A bucket's state: tokens left as of `at` (ms since epoch). */
export interface Bucket { tokens: number; at: number }

/**
 * The token bucket as a pure function, used by the in-process adapter; the PostgreSQL adapter's
 * statement computes the same in SQL. A refused request changes nothing (no debt): a client that
 * retries too early waits no longer than one that waits.
 */
export function takeToken(bucket: Bucket | undefined, limit: number, now: number): { bucket: Bucket; taken: Taken } {
  // A clock that went back (another process's, or an adjusted one) refills nothing and never rewinds `at`.
  // Multiplied before dividing, as the SQL does, so that whole tokens come out whole.
  const tokens = bucket ? Math.min(limit, bucket.tokens + (Math.max(0, now - bucket.at) * limit) / 60_000) : limit
  const at = bucket ? Math.max(bucket.at, now) : now
  if (tokens >= 1) return { bucket: { tokens: tokens - 1, at }, taken: { allowed: true, remaining: Math.floor(tokens - 1) } }
  return {
    bucket: bucket ?? { tokens, at },
    taken: { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(((1 - tokens) * 60) / limit)) },
  }
}
