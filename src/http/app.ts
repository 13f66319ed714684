import Fastify, { type FastifyInstance } from 'fastify'
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
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-request-id', req.id)
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
