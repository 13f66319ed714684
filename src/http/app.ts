import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify'
import multipart from '@fastify/multipart'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { newUlid } from '../shared/ids.js'
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

/** The root plugin: cross-cutting plugins first, then each module's routes in its API area. */
export async function buildApp(platform: Platform, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? { level: platform.config.logLevel },
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : newUlid()
    },
    requestIdHeader: false,
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
  app.addHook('onResponse', async () => { if (closing) app.server.closeIdleConnections() })

  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-request-id', req.id)
    if (closing) reply.header('connection', 'close')
    return payload
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
