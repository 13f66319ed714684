import type { FastifyInstance } from 'fastify'
import type { Platform } from '../platform.js'
import type { ReadinessCheck } from './routes/health.js'

export type RoutesPlugin = (app: FastifyInstance, opts: { platform: Platform }) => Promise<void>

/** A business module plugs its routes into the three API areas; each area authenticates its own way. */
export interface HttpModule {
  name: string
  /** Under `/api/v1`, organization token required. */
  routes?: RoutesPlugin
  /** Under `/admin/v1`, admin token required. */
  adminRoutes?: RoutesPlugin
  /** Under `/carrier/v1`, carrier API key required. */
  carrierRoutes?: RoutesPlugin
  readiness?: (platform: Platform) => ReadinessCheck[]
}
