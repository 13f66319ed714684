import { ErrorResponse, errorResponses } from '../../../schemas/api/common.js'
import { RouteProgressParams, RouteProgressSnapshot } from '../../../schemas/api/route-progress.js'
import { callerOf, driverOf } from '../../http/plugins/auth.js'
import type { RoutesPlugin } from '../../http/module.js'
import { NotFoundError } from '../../shared/errors.js'
import type { FastifyRequest } from 'fastify'
import { openEventStream, lastEventIdOf } from './event-stream.js'
import { readFeedRoute, snapshotOf, visibleTo, type FeedViewer } from './feed-queries.js'
import { hubOf } from './hub-of.js'
import { etasOfRoute } from './route-etas.js'

const viewerOf = (req: FastifyRequest): FeedViewer => ({ organizationId: callerOf(req).organization.id, driverId: driverOf(req)?.id ?? null })

/** A route's live progress (DESIGN §3.9): the snapshot and its server-sent events; drivers: their published routes. */
export const readProgressRoutes: RoutesPlugin = async (app, { platform }) => {
  const hub = await hubOf(platform, app.log)
  app.addHook('preClose', (done) => { hub.endAll(); done() })

  const visibleRoute = async (req: FastifyRequest, id: number) => {
    const route = await readFeedRoute(platform.rm, id)
    if (!route || !visibleTo(route, viewerOf(req))) throw new NotFoundError('Route')
    return route
  }

  app.get('/routes/:id/progress', {
    config: { drivers: true },
    schema: {
      tags: ['routes'], summary: 'A route\'s progress now: its status, counts and tasks in order',
      params: RouteProgressParams, response: { 200: RouteProgressSnapshot, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const [route, etas] = await Promise.all([visibleRoute(req, req.params.id), etasOfRoute(platform.rm, req.params.id)])
    return snapshotOf(route, etas)
  })

  app.get('/routes/:id/progress/stream', {
    config: { drivers: true },
    schema: {
      tags: ['routes'],
      summary: 'A route\'s progress as server-sent events (id, event, data {route_id, task_ulid?, status, progress}; `task.eta` adds eta); resumable with Last-Event-ID',
      params: RouteProgressParams, response: { 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const lastEventId = lastEventIdOf(req)
    await visibleRoute(req, req.params.id)
    const viewer = viewerOf(req)
    // A driver's stream ends when the route is given to another driver.
    const stillVisible = viewer.driverId === null ? undefined : async () => {
      const route = await readFeedRoute(platform.rm, req.params.id)
      return route !== undefined && visibleTo(route, viewer)
    }
    openEventStream(req, reply, {
      rm: platform.rm, hub, routeId: req.params.id, lastEventId, heartbeatMs: platform.config.sseHeartbeatMs, ...(stillVisible ? { stillVisible } : {}),
    })
    return reply
  })
}
