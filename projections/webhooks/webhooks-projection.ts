import type { Kysely } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import type { WebhookCreated, WebhookDeleted } from '../../schemas/events/webhooks.js'
import type { Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import { idOf } from '../../schemas/events/streams.js'

const webhookIdOf = (e: RecordedEvent) => idOf.webhook(e.streamId)!

/**
 * Change-notice topic: subscriptions that came or went, keyed by organization (a creation) or by
 * webhook id (a deletion, whose event does not name the organization). Whoever keeps the live
 * subscriptions of an organization drops them by both.
 */
export const WEBHOOK_SUBSCRIPTIONS = 'webhook_subscriptions'

/** webhooks: read by the routes, by the notifier's intake (who listens) and by the dispatcher (url, secret). */
export const webhooksProjection: Projection = writesOnly({
  name: 'webhooks',
  handles: ['WebhookCreated', 'WebhookDeleted'],
  async apply(db: Kysely<ReadModelDatabase>, events: RecordedEvent[], ctx) {
    ctx.changed(WEBHOOK_SUBSCRIPTIONS, events.map((e) => (e.type === 'WebhookCreated' ? (e.data as WebhookCreated).organization_id : webhookIdOf(e))))
    for (const e of events) {
      switch (e.type) {
        case 'WebhookCreated': {
          const d = e.data as WebhookCreated
          await db.insertInto('webhooks').values({
            id: d.id, organization_id: d.organization_id, url: d.url, events: JSON.stringify(d.events),
            secret_encrypted: d.secret_encrypted, created_at: d.created_at, updated_at: d.created_at, deleted_at: null,
          }).onConflict((oc) => oc.column('id').doNothing()).execute()
          break
        }
        case 'WebhookDeleted': {
          const d = e.data as WebhookDeleted
          await db.updateTable('webhooks').set({ deleted_at: d.deleted_at, updated_at: d.deleted_at }).where('id', '=', webhookIdOf(e)).execute()
          break
        }
        default:
          break
      }
    }
  },
})
