import { Vehicle, VehicleIdParams, VehiclesPage, VehiclesQuery } from '../../schemas/api/vehicles.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { findVehicle, listVehicles, toVehicle } from './queries.js'

export const readVehicleRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/vehicles', {
    schema: { tags: ['vehicles'], summary: 'Vehicles of the organization, oldest first, paginated', querystring: VehiclesQuery, response: { 200: VehiclesPage, ...errorResponses } },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const paging = pageRequest(req.query)
    const after = requestCursor(req.query.cursor, 'string', paging)
    const listed = await listVehicles(readsOf(platform, reply).rm, org.id, paging, after)
    return { data: listed.rows.map(toVehicle), ...pageOf(req, paging, listed.total, listed.rows.length, { next: nextCursor(listed.hasMore, listed.last, paging.page) }) }
  })

  app.get('/vehicles/:id', {
    schema: { tags: ['vehicles'], summary: 'A vehicle', params: VehicleIdParams, response: { 200: Vehicle, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await findVehicle(platform.rm, organizationOf(req).id, req.params.id)
    if (!row) throw new NotFoundError('Vehicle')
    return toVehicle(row)
  })
}
