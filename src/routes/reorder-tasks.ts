import { ReorderRouteTasksBody, RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { ErrorBag } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { loadProfile, overflowMessage } from './capacity.js'
import { requireEditable, requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand, tasksChangeAnswer } from './route-command.js'

export interface ReorderRouteTasks {
  type: 'ReorderRouteTasks'
  data: { organization_id: string; task_ulids: readonly string[]; now: Date }
}

/** The same set of tasks in a new order (422 naming each stranger or repeat, and the set when one is missing), within capacity. */
export function decide(command: ReorderRouteTasks, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  requireEditable(state)
  const order = command.data.task_ulids
  const bag = new ErrorBag()
  const on = new Map(state.tasks.map((t) => [t.ulid, t]))
  order.forEach((u, i) => {
    if (order.indexOf(u) !== i) bag.add(`task_ulids.${i}`, 'The task appears more than once.')
    else if (!on.has(u)) bag.add(`task_ulids.${i}`, 'The task is not on this route.')
  })
  const missing = state.tasks.filter((t) => !order.includes(t.ulid))
  if (missing.length) bag.add('task_ulids', `A reorder lists every task of the route once; missing: ${missing.map((t) => t.ulid).join(', ')}.`)
  bag.throwIfAny()
  if (order.every((u, i) => state.tasks[i]!.ulid === u)) return []
  const { overflow } = loadProfile(order.map((u) => on.get(u)!), state.capacity)
  if (overflow) bag.add('task_ulids', overflowMessage(overflow))
  bag.throwIfAny()
  return [{ type: 'RouteTasksReordered', data: { ...ids, task_ulids: [...order], reordered_at: command.data.now.toISOString() } }]
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
      decide,
    })
    return tasksChangeAnswer(platform, org.id, req.params.id, result)
  })
}
