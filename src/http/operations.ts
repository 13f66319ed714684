import type { RoutesPlugin } from './module.js'

/**
 * The operations half of the routes API (users, vehicles, tasks, blueprints, workflows, routes,
 * webhooks; DESIGN §3.9) belongs to carrier organizations: a shipper-only organization gets 403 on
 * every route registered through this wrapper (spec: a shipper may only quote, ship, label and track).
 */
export const operationsRoutes = (...plugins: RoutesPlugin[]): RoutesPlugin => async (app, opts) => {
  app.addHook('onRequest', app.requireCarrierRole)
  for (const plugin of plugins) await app.register(plugin, opts)
}
