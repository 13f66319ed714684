import { Webhook, WebhookIdParams, WebhooksPage, WebhooksQuery } from '../../schemas/api/webhooks.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { findWebhook, listWebhooks, toWebhook } from './queries.js'

export const readWebhookRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/webhooks', {
    schema: { tags: ['webhooks'], summary: 'Webhooks of the organization, oldest first, paginated', querystring: WebhooksQuery, response: { 200: WebhooksPage, ...errorResponses } },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const paging = pageRequest(req.query)
    const after = requestCursor(req.query.cursor, 'string', paging)
    const listed = await listWebhooks(readsOf(platform, reply).rm, org.id, paging, after)
    return { data: listed.rows.map(toWebhook), ...pageOf(req, paging, listed.total, listed.rows.length, { next: nextCursor(listed.hasMore, listed.last, paging.page) }) }
  })

  app.get('/webhooks/:id', {
    schema: { tags: ['webhooks'], summary: 'A webhook (its secret is never shown again)', params: WebhookIdParams, response: { 200: Webhook, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await findWebhook(platform.rm, organizationOf(req).id, req.params.id)
    if (!row) throw new NotFoundError('Webhook')
    return toWebhook(row)
  })
}
