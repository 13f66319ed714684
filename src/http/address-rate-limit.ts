import type { FastifyRequest } from 'fastify'
import type { Platform } from '../platform.js'
import { clientKey } from './client-address.js'
import { HttpError } from './http-error.js'

class AddressRateLimited extends HttpError {
  constructor(readonly retryAfter: number) {
    super(429, 'rate_limited', 'Too many requests from this address; retry after the time in Retry-After.')
  }
}

/**
 * A budget of `perMinute` requests per client address (0: none) for pages anyone may open without
 * a token (tracking pages, live route pages), each family in its own buckets of the platform's rate
 * limiter (PostgreSQL across processes, or this process on the embedded database). Beyond it, 429
 * with Retry-After: these are browser pages, not the specification's API (whose limit is a 409).
 * Returns what an `onRequest` hook awaits; it throws the 429.
 */
export function addressRateLimit(platform: Platform, family: string, perMinute: number): (req: FastifyRequest) => Promise<void> {
  return async (req) => {
    if (perMinute <= 0) return
    let taken
    try {
      taken = await platform.rateLimiter.take(`${family}:${clientKey(req.ip)}`, perMinute, platform.clock())
    } catch (err) {
      // The limit protects the service; a page that could still be served is not refused for it.
      req.log.warn({ err }, `${family} rate limit: the limiter failed; request let through`)
      return
    }
    if (!taken.allowed) throw new AddressRateLimited(taken.retryAfterSeconds)
  }
}
