import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { WebhookEvents } from '../../schemas/events/webhooks.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'
import { sql } from 'kysely'

const webhookIdOf = (e: RecordedEvent) => idOf.webhook(e.streamId)!

/**
 * Change-notice topic: subscriptions that came or went, keyed by organization (a creation) or by
 * webhook id (a deletion, whose event does not name the organization). Whoever keeps the live
 * subscriptions of an organization drops them by both.
 */
export const WEBHOOK_SUBSCRIPTIONS = 'webhook_subscriptions'

/** webhooks: read by the routes, by the notifier's intake (who listens) and by the dispatcher (url, secret); webhook_listing_counts. */
export const webhooksProjection: Projection = writesOnly(defineProjection({
  name: 'webhooks',
  events: WebhookEvents,
  async apply(db, events, ctx) {
    ctx.changed(WEBHOOK_SUBSCRIPTIONS, events.map((e) => (e.type === 'WebhookCreated' ? e.data.organization_id : webhookIdOf(e))))
    for (const e of events) {
      switch (e.type) {
        case 'WebhookCreated': {
          const d = e.data
          // One statement each (this projection only writes): the live count moves only with a row that changed.
          await db.with('moved', (w) => w.insertInto('webhooks').values({
            id: d.id, organization_id: d.organization_id, url: d.url, events: JSON.stringify(d.events),
            secret_encrypted: d.secret_encrypted, created_at: d.created_at, updated_at: d.created_at, deleted_at: null,
          }).onConflict((oc) => oc.column('id').doNothing()).returning('organization_id'))
            .insertInto('webhook_listing_counts').columns(['organization_id', 'n'])
            .expression((eb) => eb.selectFrom('moved').select(['organization_id', sql<string>`count(*)`.as('n')]).groupBy('organization_id'))
            .onConflict((oc) => oc.column('organization_id').doUpdateSet({ n: sql`webhook_listing_counts.n + excluded.n` })).execute()
          break
        }
        case 'WebhookDeleted': {
          const d = e.data
          // A webhook deleted already keeps its first deletion (and leaves the count alone).
          await db.with('moved', (w) => w.updateTable('webhooks').set({ deleted_at: d.deleted_at, updated_at: d.deleted_at })
            .where('id', '=', webhookIdOf(e)).where('deleted_at', 'is', null).returning('organization_id'))
            .insertInto('webhook_listing_counts').columns(['organization_id', 'n'])
            .expression((eb) => eb.selectFrom('moved').select(['organization_id', sql<string>`-count(*)`.as('n')]).groupBy('organization_id'))
            .onConflict((oc) => oc.column('organization_id').doUpdateSet({ n: sql`webhook_listing_counts.n + excluded.n` })).execute()
          // No row at zero (the organization's last live webhook went): a rebuild gives the same rows.
          await db.deleteFrom('webhook_listing_counts').where('n', '=', '0')
            .where('organization_id', '=', (eb) => eb.selectFrom('webhooks').select('organization_id').where('id', '=', webhookIdOf(e))).execute()
          break
        }
        default:
          break
      }
    }
  },
}))
