import { User, UserIdParams, UsersPage, UsersQuery } from '../../schemas/api/users.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf } from '../http/pagination.js'
import { flatRequest, keysetOf } from '../http/listing-page.js'
import type { RoutesPlugin } from '../http/module.js'
import { findUser, listUsers, toUser } from './queries.js'

export const readUserRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/users', {
    schema: { tags: ['users'], summary: 'Users of the organization, oldest first, paginated', querystring: UsersQuery, response: { 200: UsersPage, ...errorResponses } },
  }, async (req) => {
    const org = organizationOf(req)
    const { paging, after } = flatRequest(req.query, 'string')
    const listed = await listUsers(platform.rm, org.id, req.query, paging, after)
    return { data: listed.rows.map(toUser), ...pageOf(req, paging, listed.total, listed.rows.length, keysetOf(listed, paging.page)) }
  })

  app.get('/users/:id', {
    schema: { tags: ['users'], summary: 'A user', params: UserIdParams, response: { 200: User, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await findUser(platform.rm, organizationOf(req).id, req.params.id)
    if (!row) throw new NotFoundError('User')
    return toUser(row)
  })
}
