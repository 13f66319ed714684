import { DriverPositionsPage, DriverPositionsQuery } from '../../schemas/api/positions.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { UserIdParams } from '../../schemas/api/users.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { findUser } from '../users/queries.js'
import { positionsOfDriver } from './positions-table.js'

const DEFAULT_SPAN_MS = 3600_000

/** `GET /users/{id}/positions` (DESIGN §3.10): where a driver has been, for the organization and its dispatchers. */
export const readPositionsRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/users/:id/positions', {
    schema: {
      tags: ['users'], summary: 'A driver\'s reported positions recorded between `from` and `to` (default: the last hour), oldest first',
      params: UserIdParams, querystring: DriverPositionsQuery, response: { 200: DriverPositionsPage, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const orgId = organizationOf(req).id
    const user = await findUser(platform.rm, orgId, req.params.id)
    if (!user) throw new NotFoundError('User')
    const to = req.query.to ? new Date(req.query.to) : platform.clock()
    const from = req.query.from ? new Date(req.query.from) : new Date(to.getTime() - DEFAULT_SPAN_MS)
    if (from > to) throw ValidationError.field('from', 'The from must be at or before to.')
    const limit = req.query.limit ?? 1000
    const { positions, more } = await positionsOfDriver(readsOf(platform, reply).db, orgId, user.id, from, to, limit)
    return {
      data: positions.map((p) => ({ ...p, recorded_at: p.recorded_at.toISOString(), received_at: p.received_at.toISOString() })),
      meta: { from: from.toISOString(), to: to.toISOString(), limit, has_more: more },
    }
  })
}
