import { User, UserIdParams, UsersPage, UsersQuery } from '../../schemas/api/users.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { findUser, listUsers, toUser } from './queries.js'

export const readUserRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/users', {
    schema: { tags: ['users'], summary: 'Users of the organization, oldest first, paginated', querystring: UsersQuery, response: { 200: UsersPage, ...errorResponses } },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const paging = pageRequest(req.query)
    const after = requestCursor(req.query.cursor, 'string', paging)
    const listed = await listUsers(readsOf(platform, reply).rm, org.id, req.query, paging, after)
    return { data: listed.rows.map(toUser), ...pageOf(req, paging, listed.total, listed.rows.length, { next: nextCursor(listed.hasMore, listed.last, paging.page) }) }
  })

  app.get('/users/:id', {
    schema: { tags: ['users'], summary: 'A user', params: UserIdParams, response: { 200: User, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await findUser(platform.rm, organizationOf(req).id, req.params.id)
    if (!row) throw new NotFoundError('User')
    return toUser(row)
  })
}
