import { DeliveriesPage, DeliveriesQuery, DeliveryEnvelope, DeliveryIdParams, WebhookIdParams } from '../../schemas/api/webhooks.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { requeueOf } from '../notifications/outbox.js'
import { kickDispatchers } from '../notifications/dispatcher.js'
import { findDelivery, findWebhook, listDeliveries } from './queries.js'

/** The delivery log of a webhook (every attempt) and manual redelivery, as carriers have for theirs. */
export const deliveryRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/webhooks/:id/deliveries', {
    schema: {
      tags: ['webhooks'], summary: 'Delivery log: every delivery with every attempt (newest first), paginated',
      params: WebhookIdParams, querystring: DeliveriesQuery, response: { 200: DeliveriesPage, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    if (!(await findWebhook(platform.rm, org.id, req.params.id))) throw new NotFoundError('Webhook')
    const paging = pageRequest(req.query)
    const after = requestCursor(req.query.cursor, 'number', paging)
    const listed = await listDeliveries(readsOf(platform, reply), req.params.id, req.query, paging, after)
    return { data: listed.deliveries, ...pageOf(req, paging, listed.total, listed.deliveries.length, { next: nextCursor(listed.hasMore, listed.last, paging.page) }) }
  })

  app.post('/webhooks/:id/deliveries/:delivery_id/redeliver', {
    schema: {
      tags: ['webhooks'], summary: 'Send a delivery again now (same id, fresh retry schedule)',
      params: DeliveryIdParams, response: { 202: DeliveryEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const { id, delivery_id } = req.params
    if (!(await findWebhook(platform.rm, org.id, id))) throw new NotFoundError('Webhook')
    if (!(await requeueOf(platform.db, { webhookId: id }, delivery_id))) throw new NotFoundError('Delivery')
    kickDispatchers()
    const delivery = await findDelivery(platform, id, delivery_id)
    if (!delivery) throw new NotFoundError('Delivery')
    return reply.code(202).send({ success: true, delivery })
  })
}
