import { ReorderRouteTasksBody, RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireEditable, requireRoute, routeDeciderOf, type RouteEvent, type RouteState, tasksReordered } from './route.js'
import { runRouteCommand, tasksChangeAnswer } from './route-command.js'

export interface ReorderRouteTasks {
  type: 'ReorderRouteTasks'
  data: { organization_id: string; task_ulids: readonly string[]; now: Date }
}

/** The same set of tasks in a new order, on an editable route (see tasksReordered). */
export function decide(command: ReorderRouteTasks, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  requireEditable(state)
  return tasksReordered(state, ids, command.data.task_ulids, command.data.now)
}

export const decider = routeDeciderOf(decide)

export const reorderRouteTasksRoutes: RoutesPlugin = async (app, { platform }) => {
  app.put('/routes/:id/tasks', {
    schema: {
      tags: ['routes'], summary: 'Reorder the route\'s tasks (the same set, in the new order), checking capacity',
      params: RouteParams, body: ReorderRouteTasksBody, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    const ulids = req.body.task_ulids.map((u) => u.toUpperCase())
    const result = await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: req.params.id, taskUlids: [],
      build: (): ReorderRouteTasks => ({ type: 'ReorderRouteTasks', data: { organization_id: org.id, task_ulids: ulids, now: ctx.now } }),
      decider,
    })
    return tasksChangeAnswer(platform, org.id, req.params.id, result)
  })
}
