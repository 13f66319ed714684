import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createRouteRoutes } from './create-route.js'
import { updateRouteRoutes } from './update-route.js'
import { addRouteTasksRoutes } from './add-tasks.js'
import { removeRouteTaskRoutes } from './remove-task.js'
import { reorderRouteTasksRoutes } from './reorder-tasks.js'
import { publishRouteRoutes } from './publish-route.js'
import { blockRouteRoutes } from './block-route.js'
import { unblockRouteRoutes } from './unblock-route.js'
import { readRouteRoutes } from './read-routes.js'
import { optimizeRouteRoutes } from './optimize-route.js'
import { planRoutesRoutes } from './plan-routes.js'

export { startRoute } from './start-route.js'
export { finishRouteIfDone } from './finish-route.js'
export { unrouteTask } from './remove-task.js'
export { loadProfile, routeStream, type RouteEvent } from './route.js'

/** Routes of a carrier organization (DESIGN §3.9): tasks in order for one driver, one vehicle, one date. */
export const routesModule: HttpModule = {
  name: 'routes',
  routes: operationsRoutes(
    createRouteRoutes, updateRouteRoutes, addRouteTasksRoutes, removeRouteTaskRoutes, reorderRouteTasksRoutes, publishRouteRoutes,
    blockRouteRoutes, unblockRouteRoutes, readRouteRoutes, optimizeRouteRoutes, planRoutesRoutes,
  ),
}
