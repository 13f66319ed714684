import { IDLE_FORGET_MS, type RateLimiter, type Taken } from './rate-limiter.js'
import { takeToken, type Bucket } from './token-bucket.js'

/** Buckets in this process's memory: exact for the embedded database, which has one process. */
export class InProcessRateLimiter implements RateLimiter {
  readonly kind = 'in-process'
  private readonly buckets = new Map<string, Bucket>()

  async take(bucket: string, limit: number, now: Date): Promise<Taken> {
    const next = takeToken(this.buckets.get(bucket), limit, now.getTime())
    this.buckets.set(bucket, next.bucket)
    return next.taken
  }

  async forgetIdle(now: Date): Promise<void> {
    const before = now.getTime() - IDLE_FORGET_MS
    for (const [k, b] of this.buckets) if (b.at < before) this.buckets.delete(k)
  }
}
