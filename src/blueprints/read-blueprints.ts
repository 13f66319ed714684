import { Blueprint, BlueprintIdParams, BlueprintQuery, BlueprintsPage, BlueprintsQuery } from '../../schemas/api/blueprints.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { ensureDefaultBlueprints } from './default-blueprints.js'
import { listBlueprints, readBlueprint } from './queries.js'

export const readBlueprintRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/blueprints', {
    schema: { tags: ['blueprints'], summary: 'Blueprints of the organization (their latest versions), oldest first, paginated', querystring: BlueprintsQuery, response: { 200: BlueprintsPage, ...errorResponses } },
  }, async (req, reply) => {
    const org = organizationOf(req)
    await ensureDefaultBlueprints(platform, org.id)
    const paging = pageRequest(req.query)
    const after = requestCursor(req.query.cursor, 'number', paging)
    const listed = await listBlueprints(readsOf(platform, reply).rm, org.id, req.query, paging, after)
    return { data: listed.rows, ...pageOf(req, paging, listed.total, listed.rows.length, { next: nextCursor(listed.hasMore, listed.last, paging.page) }) }
  })

  app.get('/blueprints/:id', {
    schema: {
      tags: ['blueprints'], summary: 'A blueprint by id or key: its latest version, or ?version=n',
      params: BlueprintIdParams, querystring: BlueprintQuery, response: { 200: Blueprint, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    await ensureDefaultBlueprints(platform, org.id)
    const found = await readBlueprint(platform.rm, org.id, req.params.id, req.query.version)
    if (!found) throw new NotFoundError(req.query.version ? 'Blueprint version' : 'Blueprint')
    return found
  })
}
