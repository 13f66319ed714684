import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createWebhookRoutes } from './create-webhook.js'
import { deleteWebhookRoutes } from './delete-webhook.js'
import { readWebhookRoutes } from './read-webhooks.js'
import { deliveryRoutes } from './deliveries.js'

/**
 * Organization webhooks (DESIGN §3.9): subscriptions and their delivery log. The sending is the
 * carrier notifications' engine (src/processes/notifier.ts, src/notifications/dispatcher.ts).
 */
export const webhooksModule: HttpModule = {
  name: 'webhooks',
  routes: operationsRoutes(createWebhookRoutes, deleteWebhookRoutes, readWebhookRoutes, deliveryRoutes),
}
