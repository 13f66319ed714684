import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Platform } from '../../platform.js'
import type { RequestWork } from '../../infrastructure/database/request-work.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's statements: timed out, and cancelled when its client leaves (request-work.ts). */
    databaseWork?: RequestWork | undefined
  }
}

/**
 * Methods whose work is timed out and dropped when the client leaves. A write the client gave up on
 * runs to its end: cancelled half-way, its events could be appended while its answer became a 5xx
 * that frees its Idempotency-Key, and the retry would run it twice.
 */
const DROPPED_WHEN_LEFT = new Set(['GET', 'HEAD'])

/**
 * Nothing runs on after its client gave up (issue 32): every request's statements run as its
 * database work, under REQUEST_STATEMENT_TIMEOUT_MS, and a read whose client disconnects before
 * the answer has its running statements cancelled. Registered before authentication, so that the
 * token look-up and the rate limit's lease are the request's work too.
 */
export default fp(async function databaseWork(app: FastifyInstance, { platform }: { platform: Platform }) {
  const opts = { statementTimeoutMs: platform.config.requestStatementTimeoutMs }
  app.decorateRequest('databaseWork', undefined)

  // Hooks on every request take callbacks, not promises (app.ts): cheaper per call.
  app.addHook('onRequest', (req, reply, done) => {
    // Only reads run as the request's work. A write's promises go on into background work it
    // starts (the relay, the notifier, the dispatcher are kicked from the append), which would
    // then run in its context: under its timeout and on connections it holds. The webhooks of one
    // subject came out of order that way (test/docs/readme.test.ts under load).
    if (!DROPPED_WHEN_LEFT.has(req.method)) return done()
    const work = platform.database.requestWork(opts)
    req.databaseWork = work
    const res = reply.raw
    res.once('close', () => {
      if (res.writableFinished) return work.finish()
      work.abandon()
      // A hijacked reply (a live stream) has no handler left whose answer would end the work.
      if (reply.sent) work.finish()
    })
    // The rest of the request runs in here: Fastify reads the body inside the request's async
    // context (its content-type parser is an AsyncResource), so the handler is still the request's.
    work.run(done)
  })
  // The handler has answered: what its context still runs is not the request's any more.
  app.addHook('onSend', (req, _reply, payload, done) => {
    req.databaseWork?.finish()
    done(null, payload)
  })
}, { name: 'database-work' })
