import { failPendingDeliveries } from '../notifications/outbox.js'
import { DeletedWebhook, WebhookIdParams } from '../../schemas/api/webhooks.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireWebhook, webhookDeciderOf, webhookStream, type WebhookEvent, type WebhookState } from './webhook.js'
import { findWebhook } from './queries.js'

export interface DeleteWebhook { type: 'DeleteWebhook'; data: { organization_id: string; now: Date } }

/** A deleted webhook is gone for its organization: a second delete is a 404 like any unknown id. */
export function decide(command: DeleteWebhook, state: WebhookState): WebhookEvent[] {
  requireWebhook(state, command.data.organization_id)
  return [{ type: 'WebhookDeleted', data: { deleted_at: command.data.now.toISOString() } }]
}

export const decider = webhookDeciderOf(decide)

export const deleteWebhookRoutes: RoutesPlugin = async (app, { platform }) => {
  app.delete('/webhooks/:id', {
    schema: {
      tags: ['webhooks'], summary: 'Delete a webhook: nothing more is sent to it; its delivery log stays',
      params: WebhookIdParams, response: { 200: DeletedWebhook, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    if (!(await findWebhook(platform.rm, org.id, id))) throw new NotFoundError('Webhook')
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, webhookStream(id), decider, { type: 'DeleteWebhook', data: { organization_id: org.id, now: ctx.now } }, ctx)
    // Deliveries still waiting for a retry end now, in the log, rather than failing one by one later.
    await failPendingDeliveries(platform.db, id)
    return { success: true }
  })
}
