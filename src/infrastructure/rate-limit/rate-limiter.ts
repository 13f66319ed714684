/**
 * Per-token request budget (DESIGN §3.2): a token bucket holding at most `limit` tokens, refilled
 * at `limit` per minute, each request taking one. Kept where every API process sees it
 * (PostgreSQL), or in the process for the embedded single-process database.
 */
export interface RateLimiter {
  readonly kind: 'in-process' | 'postgres'
  /** Takes one token from `bucket`'s budget of `limit` per minute, as of `now`. */
  take(bucket: string, limit: number, now: Date): Promise<Taken>
  /**
   * Forgets buckets idle long enough to be full again (one minute refills any bucket), which is
   * the same as never having seen them. Called off the request path, now and then.
   */
  forgetIdle(now: Date): Promise<void>
}

export type Taken =
  | { allowed: true; /** whole tokens left after this one */ remaining: number }
  | { allowed: false; /** whole seconds after which a token is certainly there again */ retryAfterSeconds: number }

/** A bucket idle this long is full whatever its limit; kept a minute more for clock skew between processes. */
export const IDLE_FORGET_MS = 120_000
