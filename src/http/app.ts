import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { randomUUID } from 'node:crypto'
import type { Platform } from '../platform.js'
import validation from './plugins/validation.js'
import errors from './plugins/errors.js'
import auth from './plugins/auth.js'
import rateLimit from './plugins/rate-limit.js'
import idempotency from './plugins/idempotency.js'
import openapi from './plugins/openapi.js'
import { healthRoutes } from './routes/health.js'
import type { HttpModule } from './module.js'
import { modules as defaultModules } from '../modules.js'

export interface AppOptions {
  logger?: boolean | object
  modules?: HttpModule[]
}

/**
 * One info line per request, on completion, with method, url, status and time (Fastify's default
 * writes two: arrival and completion, a measurable share of a cached GET's CPU); the arrival line
 * is kept at debug level.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (request.log.level === 'debug' || request.log.level === 'trace') request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Flat keys: written as they are, without pino's req/res serializers.
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request completed')
  }
}

/** The root plugin: cross-cutting plugins first, then each module's routes in its API area. */
export async function buildApp(platform: Platform, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? { level: platform.config.logLevel },
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      // A v4 UUID: node draws its randomness in batches, so it costs far less per request than a ULID.
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID()
    },
    requestIdHeader: false,
    logController: new OneLinePerRequest(),
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: false,
    ajv: { customOptions: { allErrors: true } },
    // Errors raised before routing (bad percent-encoding, an over-long path parameter) get the API's shape too.
    frameworkErrors: (err, _req, reply: FastifyReply) => {
      const status = err.statusCode ?? 400
      if (status >= 500) return reply.code(500).send({ message: 'Internal server error.', code: 'internal_error' })
      return reply.code(status).send(status === 414
        ? { message: 'A path parameter is too long.', code: 'uri_too_long' }
        : { message: 'The URL is not valid.', code: 'bad_url' })
    },
  }).withTypeProvider<TypeBoxTypeProvider>()

  // Graceful shutdown: Fastify stops accepting and waits for in-flight requests, but a kept-alive
  // socket that served one would then hold close() up for keepAliveTimeout (72 s). So while closing,
  // every response tells the client to close and sockets that went idle are closed.
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  // Hooks on every request take callbacks, not promises: cheaper per call.
  app.addHook('onResponse', (_req, _reply, done) => {
    if (closing) app.server.closeIdleConnections()
    done()
  })

  app.addHook('onSend', (req, reply, payload, done) => {
    reply.header('x-request-id', req.id)
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })

  await app.register(validation)
  await app.register(errors)
  await app.register(openapi)
  await app.register(auth, { platform })
  await app.register(rateLimit, { perMinute: platform.config.rateLimitPerMinute })
  await app.register(idempotency, { platform })
  await app.register(multipart, { limits: { fileSize: 10 * 1024 * 1024, files: 5, fields: 20 } })

  const modules = opts.modules ?? defaultModules
  await app.register(healthRoutes, { platform, checks: modules.flatMap((m) => m.readiness?.(platform) ?? []) })

  await app.register(async (area) => {
    area.addHook('onRequest', area.authenticateOrganization)
    for (const m of modules) if (m.routes) await area.register(m.routes, { platform })
  }, { prefix: '/api/v1' })

  await app.register(async (area) => {
    area.addHook('onRequest', area.authenticateAdmin)
    for (const m of modules) if (m.adminRoutes) await area.register(m.adminRoutes, { platform })
  }, { prefix: '/admin/v1' })

  await app.register(async (area) => {
    area.addHook('onRequest', area.authenticateCarrier)
    for (const m of modules) if (m.carrierRoutes) await area.register(m.carrierRoutes, { platform })
  }, { prefix: '/carrier/v1' })

  return app
}
