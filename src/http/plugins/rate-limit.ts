import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../shared/errors.js'

class RateLimited extends AppError {
  constructor(readonly retryAfter: number) {
    super(409, 'rate_limited', 'Too many requests for this token; retry after the time in Retry-After.')
  }
}

/**
 * Per-token fixed one-minute window, answered 409 with Retry-After (the specification's code).
 * Counters are per process: N API processes allow up to N × the limit (docs/decisions.md).
 */
export default fp(async function rateLimit(app: FastifyInstance, { perMinute }: { perMinute: number }) {
  const windows = new Map<string, { start: number; count: number }>()
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [k, w] of windows) if (now - w.start >= 60_000) windows.delete(k)
  }, 60_000)
  sweep.unref()
  app.addHook('onClose', async () => clearInterval(sweep))

  // preValidation: after authentication (onRequest), before the schema, so invalid requests count too.
  app.addHook('preValidation', (req, reply, done) => {
    const p = req.principal
    if (!p || p.kind === 'admin' || perMinute <= 0) return done()
    const now = Date.now()
    let w = windows.get(p.tokenId)
    if (!w || now - w.start >= 60_000) { w = { start: now, count: 0 }; windows.set(p.tokenId, w) }
    w.count++
    reply.header('x-ratelimit-limit', perMinute).header('x-ratelimit-remaining', Math.max(0, perMinute - w.count))
    if (w.count > perMinute) return done(new RateLimited(Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000))))
    done()
  })
}, { name: 'rate-limit', dependencies: ['auth'] })
