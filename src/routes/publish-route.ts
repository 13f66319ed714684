import { RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { HttpError } from '../http/http-error.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand } from './route-command.js'
import { routeEnvelope } from './queries.js'

export interface PublishRoute { type: 'PublishRoute'; data: { organization_id: string; now: Date } }

/** Refusals the specification answers with 406 (no driver; not a draft). */
export const NOT_PUBLISHABLE = 'route_not_publishable'

/** draft → published, with the driver in the card's event (the driver sees the route from here on). */
export function decide(command: PublishRoute, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  if (state.status !== 'draft') throw new IllegalStateError(`The route is ${state.status}; only a draft route can be published.`, NOT_PUBLISHABLE)
  if (!state.driverId) throw new IllegalStateError('The route has no driver; assign one before publishing.', NOT_PUBLISHABLE)
  return [{ type: 'RoutePublished', data: { ...ids, driver_id: state.driverId, published_at: command.data.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

export const publishRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/:id/publish', {
    schema: {
      tags: ['routes'], summary: 'Publish a draft route to its driver (406 without a driver or when not a draft)',
      params: RouteParams, response: { 200: RouteEnvelope, 404: ErrorResponse, 406: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    try {
      await runRouteCommand(platform, ctx, {
        organizationId: org.id, routeId: req.params.id, taskUlids: [],
        build: (): PublishRoute => ({ type: 'PublishRoute', data: { organization_id: org.id, now: ctx.now } }),
        decider,
      })
    } catch (err) {
      if (err instanceof IllegalStateError && err.code === NOT_PUBLISHABLE) throw new HttpError(406, 'not_acceptable', err.message)
      throw err
    }
    return routeEnvelope(platform, org.id, req.params.id)
  })
}
