import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createRouteRoutes } from './create-route.js'
import { updateRouteRoutes } from './update-route.js'
import { addRouteTasksRoutes } from './add-tasks.js'
import { removeRouteTaskRoutes } from './remove-task.js'
import { reorderRouteTasksRoutes } from './reorder-tasks.js'
import { publishRouteRoutes } from './publish-route.js'
import { blockRouteRoutes } from './block-route.js'
import { readRouteRoutes } from './read-routes.js'
import { optimizeRouteRoutes } from './optimize-route.js'
import { planRoutesRoutes } from './plan-routes.js'

export { unrouteTask, startRoute, finishRouteIfDone } from './route-lifecycle.js'
export { routeStream, routeEventTypes, type RouteEvent } from './route.js'
export { loadProfile } from './capacity.js'

/** Routes of a carrier organization (DESIGN §3.9): tasks in order for one driver, one vehicle, one date. */
export const routesModule: HttpModule = {
  name: 'routes',
  routes: operationsRoutes(
    createRouteRoutes, updateRouteRoutes, addRouteTasksRoutes, removeRouteTaskRoutes, reorderRouteTasksRoutes, publishRouteRoutes,
    blockRouteRoutes, readRouteRoutes, optimizeRouteRoutes, planRoutesRoutes,
  ),
}
