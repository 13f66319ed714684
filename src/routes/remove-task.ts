import { RouteEnvelope, RouteTaskParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import type { CommandContext } from '../shared/command-handler.js'
import type { Platform } from '../platform.js'
import { taskRoutingFromStream } from '../tasks/queries.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireEditable, requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand, tasksChangeAnswer } from './route-command.js'

export interface RemoveRouteTask {
  type: 'RemoveRouteTask'
  data: { organization_id: string; task_ulid: string; now: Date; /** The workflows' cancel takes a task off any route, even a blocked one. */ force?: boolean }
}

/**
 * Takes a task off the route (its TaskUnrouted goes to the task's stream in the same write). A
 * task not on this route is a 404. Removing never needs a capacity check the caller could act on:
 * a delivery left without its pickup is then loaded at the start, as the rule says.
 */
export function decide(command: RemoveRouteTask, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  if (!command.data.force) requireEditable(state)
  if (!state.tasks.some((t) => t.ulid === command.data.task_ulid)) throw new NotFoundError('Task')
  return [{ type: 'RouteTaskRemoved', data: { ...ids, task_ulid: command.data.task_ulid, removed_at: command.data.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

/**
 * Takes a task off whatever route it is on (the workflows module calls it when a workflow is
 * cancelled: its cancelled tasks leave their routes). False when it was on none.
 */
export async function unrouteTask(
  platform: Platform, ctx: CommandContext, organizationId: string, ulid: string, opts: { /** Only a task that ended cancelled. */ onlyCancelled?: boolean } = {},
): Promise<boolean> {
  const { status, routeId } = await taskRoutingFromStream(platform.store, ulid)
  if (opts.onlyCancelled && status !== 'cancelled') return false
  if (routeId === null) return false
  try {
    await runRouteCommand(platform, ctx, {
      organizationId, routeId, taskUlids: [],
      build: (): RemoveRouteTask => ({ type: 'RemoveRouteTask', data: { organization_id: organizationId, task_ulid: ulid, now: ctx.now, force: true } }),
      decider,
    })
    return true
  } catch (err) {
    if (err instanceof NotFoundError) return false
    throw err
  }
}

export const removeRouteTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.delete('/routes/:id/tasks/:ulid', {
    schema: {
      tags: ['routes'], summary: 'Take a task off the route',
      params: RouteTaskParams, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    const ulid = req.params.ulid.toUpperCase()
    const result = await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: req.params.id, taskUlids: [],
      build: (): RemoveRouteTask => ({ type: 'RemoveRouteTask', data: { organization_id: org.id, task_ulid: ulid, now: ctx.now } }),
      decider,
    })
    return tasksChangeAnswer(platform, org.id, req.params.id, result)
  })
}
