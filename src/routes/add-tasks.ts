import { AddRouteTasksBody, RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireEditable, requireRoute, routeDeciderOf, type RouteEvent, type RouteState, tasksAdded, type TasksToAdd } from './route.js'
import { runRouteCommand, tasksChangeAnswer } from './route-command.js'

export interface AddRouteTasks { type: 'AddRouteTasks'; data: TasksToAdd }

/** The tasks inserted at a position of an editable route, checked one by one and for capacity. */
export function decide(command: AddRouteTasks, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  requireEditable(state)
  return tasksAdded(state, ids, command.data)
}

export const decider = routeDeciderOf(decide)

export const addRouteTasksRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/:id/tasks', {
    schema: {
      tags: ['routes'], summary: 'Add tasks to a route at a position (1-based; default the end), checking capacity',
      params: RouteParams, body: AddRouteTasksBody, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    const ulids = req.body.task_ulids.map((u) => u.toUpperCase())
    const result = await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: req.params.id, taskUlids: [...new Set(ulids)],
      build: (tasks): AddRouteTasks => ({ type: 'AddRouteTasks', data: { organization_id: org.id, task_ulids: ulids, position: req.body.position ?? null, tasks, now: ctx.now } }),
      decider,
    })
    return tasksChangeAnswer(platform, org.id, req.params.id, result)
  })
}
