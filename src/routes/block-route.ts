import { BlockRouteBody, RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand } from './route-command.js'
import { routeEnvelope } from './queries.js'

/** Block (with a reason) any route not finished: its tasks cannot change until it is unblocked. */
export interface BlockRoute { type: 'BlockRoute'; data: { organization_id: string; reason: string; now: Date } }

export function decide(command: BlockRoute, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  if (state.status === 'finished') throw new IllegalStateError('The route is finished; it cannot be blocked.', 'route_finished')
  if (state.status === 'blocked') throw new IllegalStateError('The route is already blocked.', 'route_blocked')
  return [{ type: 'RouteBlocked', data: { ...ids, reason: command.data.reason.trim(), blocked_at: command.data.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

export const blockRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/:id/block', {
    schema: {
      tags: ['routes'], summary: 'Block a route with a reason (its tasks cannot change until it is unblocked)',
      params: RouteParams, body: BlockRouteBody, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: req.params.id, taskUlids: [],
      build: (): BlockRoute => ({ type: 'BlockRoute', data: { organization_id: org.id, reason: req.body.reason, now: ctx.now } }),
      decider,
    })
    return routeEnvelope(platform, org.id, req.params.id)
  })
}
