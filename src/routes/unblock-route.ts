import { RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand } from './route-command.js'
import { routeEnvelope } from './queries.js'

/** Unblock a blocked route: it returns to the status it had. */
export interface UnblockRoute { type: 'UnblockRoute'; data: { organization_id: string; now: Date } }

export function decide(command: UnblockRoute, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  if (state.status !== 'blocked') throw new IllegalStateError('The route is not blocked.', 'route_not_blocked')
  return [{ type: 'RouteUnblocked', data: { ...ids, unblocked_at: command.data.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

export const unblockRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/:id/unblock', {
    schema: {
      tags: ['routes'], summary: 'Unblock a route (it returns to the status it had)',
      params: RouteParams, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: req.params.id, taskUlids: [],
      build: (): UnblockRoute => ({ type: 'UnblockRoute', data: { organization_id: org.id, now: ctx.now } }),
      decider,
    })
    return routeEnvelope(platform, org.id, req.params.id)
  })
}
