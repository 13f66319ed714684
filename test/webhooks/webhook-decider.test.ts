import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as creation, type CreateWebhook } from '../../src/webhooks/create-webhook.js'
import { decider as deletion } from '../../src/webhooks/delete-webhook.js'
import type { WebhookEvent } from '../../src/webhooks/webhook.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-24T09:00:00Z')
const at = now.toISOString()
const create: CreateWebhook = {
  type: 'CreateWebhook',
  data: { id: 'whk_1', organization_id: 'org_1', url: 'https://example.com/h', events: ['task.*', 'task.completed', 'task.*'], secret_encrypted: 'v1.x.y.z', now },
}
const created: WebhookEvent = {
  type: 'WebhookCreated',
  data: { id: 'whk_1', organization_id: 'org_1', url: 'https://example.com/h', events: ['task.*', 'task.completed'], secret_encrypted: 'v1.x.y.z', created_at: at },
}
const deleted: WebhookEvent = { type: 'WebhookDeleted', data: { deleted_at: at } }

t.test('create: the webhook with its patterns once each; a second create is refused', async (t) => {
  DeciderSpecification.for(creation).given([]).when(create).then(t, [created])
  DeciderSpecification.for(creation).given([created]).when(create).thenThrows(t, IllegalStateError, { code: 'webhook_exists' })
})

t.test('delete: once; another organization\'s or a deleted webhook is unknown', async (t) => {
  const spec = DeciderSpecification.for(deletion)
  spec.given([created]).when({ type: 'DeleteWebhook', data: { organization_id: 'org_1', now } }).then(t, [deleted])
  spec.given([created]).when({ type: 'DeleteWebhook', data: { organization_id: 'org_2', now } }).thenThrows(t, NotFoundError)
  spec.given([created, deleted]).when({ type: 'DeleteWebhook', data: { organization_id: 'org_1', now } }).thenThrows(t, NotFoundError)
  spec.given([]).when({ type: 'DeleteWebhook', data: { organization_id: 'org_1', now } }).thenThrows(t, NotFoundError)
})
