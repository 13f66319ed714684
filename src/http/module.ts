import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Platform } from '../platform.js'
import type { ReadinessCheck } from './routes/health.js'

export interface ModuleOptions { platform: Platform }

/**
 * A module's routes: a Fastify plugin typed through the TypeBox provider, so each handler's
 * `req.params`, `req.body`, `req.query` and its reply are the `Static` types of the route's schemas
 * (compile time only; the same validators run). Write route files as
 *
 *   export const thingRoutes: RoutesPlugin = async (app, { platform }) => {
 *     app.get('/things/:id', { schema: { params: ThingIdParams, response: { 200: ThingEnvelope } } }, async (req) => ...)
 *   }
 */
export type RoutesPlugin = FastifyPluginAsyncTypebox<ModuleOptions>

/** A business module plugs its routes into the three API areas; each area authenticates its own way. */
export interface HttpModule {
  name: string
  /** Under `/api/v1`, organization token required: handlers get the caller with `organizationOf(req)`. */
  routes?: RoutesPlugin
  /** Under `/admin/v1`, admin token required. */
  adminRoutes?: RoutesPlugin
  /** Under `/carrier/v1`, carrier API key required: handlers get the caller with `carrierIdOf(req)`. */
  carrierRoutes?: RoutesPlugin
  /** At the root, no authentication: the handler's own credential (a signed link) is all there is. */
  publicRoutes?: RoutesPlugin
  readiness?: (platform: Platform) => ReadinessCheck[]
}
