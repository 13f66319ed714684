import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { HttpError } from '../http-error.js'
import type { Platform } from '../../platform.js'

class RateLimited extends HttpError {
  constructor(readonly retryAfter: number) {
    super(409, 'rate_limited', 'Too many requests for this token; retry after the time in Retry-After.')
  }
}

/**
 * Per-token budget of `RATE_LIMIT_PER_MINUTE` (0: off), answered 409 with Retry-After (the
 * specification's code). The budget is a token bucket held by `platform.rateLimiter`: in
 * PostgreSQL, shared by every API process, or in this process on the embedded database.
 */
export default fp(async function rateLimit(app: FastifyInstance, { platform }: { platform: Platform }) {
  const perMinute = platform.config.rateLimitPerMinute
  if (perMinute <= 0) return
  const limiter = platform.rateLimiter
  const sweep = setInterval(() => {
    limiter.forgetIdle(platform.clock()).catch((err) => app.log.warn({ err }, 'rate limit: forgetting idle buckets failed'))
  }, 60_000)
  sweep.unref()
  app.addHook('onClose', (_app, done) => { clearInterval(sweep); done() })

  // preValidation: after authentication (onRequest), before the schema, so invalid requests count too.
  app.addHook('preValidation', (req, reply, done) => {
    const p = req.principal
    if (!p || p.kind === 'admin') return done()
    limiter.take(p.tokenId, perMinute, platform.clock()).then((taken) => {
      reply.header('x-ratelimit-limit', perMinute).header('x-ratelimit-remaining', taken.allowed ? taken.remaining : 0)
      done(taken.allowed ? undefined : new RateLimited(taken.retryAfterSeconds))
    }, (err) => {
      // The limit protects the service; it is not worth failing a request that could still be served
      // (a cached view) while the database does not answer.
      req.log.warn({ err }, 'rate limit: the limiter failed; request let through')
      done()
    })
  })
}, { name: 'rate-limit', dependencies: ['auth'] })
