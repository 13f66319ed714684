import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Span } from '@opentelemetry/api'
import { SpanKind, SpanStatusCode, startSpan, traceparentOfSpan, tracingEnabled } from '../../infrastructure/tracing/tracing.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's server span (tracing on), parent of what its commands write. */
    traceSpan?: Span | undefined
  }
}

/** The traceparent a request's commands put into their events' metadata (undefined while tracing is off). */
export const requestTraceparent = (req: FastifyRequest): string | undefined => traceparentOfSpan(req.traceSpan)

/**
 * A server span per request, child of the caller's `traceparent` header when it sends one. The
 * hooks are added only when tracing was started before the app was built: off, requests pay nothing.
 */
export default fp(async function tracing(app: FastifyInstance) {
  if (!tracingEnabled()) return
  app.decorateRequest('traceSpan', undefined)
  app.addHook('onRequest', (req, _reply, done) => {
    const header = req.headers['traceparent']
    const route = req.routeOptions.url ?? 'unmatched'
    req.traceSpan = startSpan(`${req.method} ${route}`, typeof header === 'string' ? header : undefined, {
      kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'http.route': route },
    })
    done()
  })
  app.addHook('onResponse', (req, reply, done) => {
    req.traceSpan?.setAttribute('http.response.status_code', reply.statusCode)
    if (reply.statusCode >= 500) req.traceSpan?.setStatus({ code: SpanStatusCode.ERROR })
    req.traceSpan?.end()
    done()
  })
}, { name: 'tracing' })
