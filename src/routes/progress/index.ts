import type { HttpModule } from '../../http/module.js'
import { operationsRoutes } from '../../http/operations.js'
import { liveLinkRoutes, livePageRoutes } from './live-links.js'
import { readProgressRoutes } from './read-progress.js'

/**
 * Live route progress (DESIGN §3.9, issue 12): the snapshot and server-sent events of a route's
 * feed (projections/route-feed), live links, and the live page a browser opens without a token.
 */
export const routeProgressModule: HttpModule = {
  name: 'route-progress',
  routes: operationsRoutes(readProgressRoutes, liveLinkRoutes),
  publicRoutes: livePageRoutes,
}
