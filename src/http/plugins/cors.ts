import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import fastifyCors from '@fastify/cors'

/** Response headers a browser app may read: ids to quote, replay and rate-limit answers, downloads. */
const EXPOSED_HEADERS = ['x-request-id', 'idempotent-replayed', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'location', 'content-disposition']

/**
 * CORS for browser apps on the origins of `CORS_ORIGINS` (`*`: any): the API authenticates with
 * bearer tokens, never cookies, so credentials stay off. A preflight is answered here, before
 * authentication (a browser sends none with it): 204 with the allow headers for an allowed origin,
 * 204 with none for any other, never the 404 of a path that has no OPTIONS route.
 */
export default fp(async function cors(app: FastifyInstance, { origins }: { origins: readonly string[] }) {
  const any = origins.includes('*')
  const allowed = new Set(origins)
  app.addHook('onRequest', (req, reply, done) => {
    const origin = req.headers.origin
    const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined
    if (preflight && !any && !allowed.has(origin)) return reply.code(204).header('vary', 'Origin').send()
    done()
  })
  if (origins.length === 0) return
  await app.register(fastifyCors, {
    origin: any ? '*' : [...allowed],
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    // A browser asks once per ten minutes per URL, not before every call.
    maxAge: 600,
  })
}, { name: 'cors' })
