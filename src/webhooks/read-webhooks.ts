import { Webhook, WebhookIdParams, WebhooksPage, WebhooksQuery } from '../../schemas/api/webhooks.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf } from '../http/pagination.js'
import { flatRequest, keysetOf } from '../http/listing-page.js'
import type { RoutesPlugin } from '../http/module.js'
import { findWebhook, listWebhooks, toWebhook } from './queries.js'

export const readWebhookRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/webhooks', {
    schema: { tags: ['webhooks'], summary: 'Webhooks of the organization, oldest first, paginated', querystring: WebhooksQuery, response: { 200: WebhooksPage, ...errorResponses } },
  }, async (req) => {
    const org = organizationOf(req)
    const { paging, after } = flatRequest(req.query, 'string')
    const listed = await listWebhooks(platform.rm, org.id, paging, after)
    return { data: listed.rows.map(toWebhook), ...pageOf(req, paging, listed.total, listed.rows.length, keysetOf(listed, paging.page)) }
  })

  app.get('/webhooks/:id', {
    schema: { tags: ['webhooks'], summary: 'A webhook (its secret is never shown again)', params: WebhookIdParams, response: { 200: Webhook, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await findWebhook(platform.rm, organizationOf(req).id, req.params.id)
    if (!row) throw new NotFoundError('Webhook')
    return toWebhook(row)
  })
}
