import { GetRouteQuery, Route, RouteParams, RoutesPage, RoutesQuery } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { callerOf, driverOf, organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import type { FastifyRequest } from 'fastify'
import { foldRoute, routeStream } from './route.js'
import { findRouteRow, listRoutes, routeAsOf, routeFromRow, type RouteViewer } from './queries.js'
import { EventHistory, HistoryQuery } from '../../schemas/api/audit.js'
import { historyResponse } from '../audit/history.js'

/** Listing and reading are open to drivers: a driver sees the published-or-later routes it drives (DESIGN §3.9). */
const driversToo = { drivers: true } as const

export const routeViewerOf = (req: FastifyRequest): RouteViewer =>
  ({ organizationId: callerOf(req).organization.id, driverId: driverOf(req)?.id ?? null })

export const readRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/routes', {
    config: driversToo,
    schema: {
      tags: ['routes'], summary: 'Routes, newest shift first, paginated (perPage default 20); filters shift_date, status, driver_id',
      querystring: RoutesQuery, response: { 200: RoutesPage, ...errorResponses },
    },
  }, async (req, reply) => {
    const paging = pageRequest(req.query)
    const cursor = requestCursor(req.query.cursor, 'number', paging)
    const { routes, total, hasMore, last } = await listRoutes({ ...readsOf(platform, reply), clock: platform.clock }, routeViewerOf(req), req.query, paging, cursor)
    return { routes: { data: routes, ...pageOf(req, paging, total, routes.length, { next: nextCursor(hasMore, last, paging.page) }) } }
  })

  app.get('/routes/:id', {
    config: driversToo,
    schema: {
      tags: ['routes'], summary: 'A route (at root); ?as_of=<date-time> gives it as it was, from the event log',
      params: RouteParams, querystring: GetRouteQuery, response: { 200: Route, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const viewer = routeViewerOf(req)
    const row = await findRouteRow(platform.rm, viewer, req.params.id)
    if (!row) throw new NotFoundError('Route')
    if (!req.query.as_of) return routeFromRow(platform, row)
    const asOf = new Date(req.query.as_of)
    // Times are compared at millisecond precision, as /events shows them (the store keeps microseconds).
    const events = (await platform.store.readStream(routeStream(req.params.id), { until: new Date(asOf.getTime() + 1) }))
      .filter((e) => e.recordedAt.getTime() <= asOf.getTime())
    if (!events.length) throw new NotFoundError('Route')
    return routeAsOf(platform, row, foldRoute(events), events, asOf)
  })

  // The audit history, as shipments, tasks and workflows give theirs (DESIGN §3.8): every event with its actor.
  app.get('/routes/:id/events', {
    schema: {
      tags: ['routes'], summary: 'Audit: the route\'s whole event history, in order, from the event log; ?proof=true adds inclusion proofs',
      params: RouteParams, querystring: HistoryQuery, response: { 200: EventHistory, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const row = await findRouteRow(platform.rm, { organizationId: organizationOf(req).id, driverId: null }, req.params.id)
    if (!row) throw new NotFoundError('Route')
    return historyResponse(platform, routeStream(req.params.id), await platform.store.readStream(routeStream(req.params.id)), req.query)
  })
}
