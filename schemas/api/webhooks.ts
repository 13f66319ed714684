import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, Page, pageQuery } from './common.js'

export const Webhook = Type.Object({
  id: Type.String({ description: 'public id, prefix whk_' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'Webhook' })
export type Webhook = Static<typeof Webhook>

// Shapes only: the URL's safety and each pattern are checked in code, so that every failing field
// (`url`, `events`, `events.1`) is reported in one 422.
export const CreateWebhookBody = Type.Object({
  url: Type.String({ maxLength: 2048 }),
  events: Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: 'known types (task.completed), wildcards (task.*), custom.<name>' }),
}, { title: 'CreateWebhookRequest', additionalProperties: false })
export type CreateWebhookBody = Static<typeof CreateWebhookBody>

export const CreatedWebhook = Type.Object({
  success: Type.Boolean(),
  webhook: Webhook,
  secret: Type.String({ description: 'whsec_<base64>, shown once: verifies the Standard Webhooks signatures' }),
}, { title: 'CreatedWebhook' })
export const WebhookIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
export const DeliveryIdParams = Type.Object({ id: Type.String({ maxLength: 64 }), delivery_id: Type.String({ maxLength: 64 }) })
export const WebhooksQuery = Type.Object({ ...pageQuery(), cursor: ListingCursor }, { additionalProperties: false })
export const WebhooksPage = Page(Webhook, 'WebhooksPage')
export const DeletedWebhook = Type.Object({ success: Type.Boolean() }, { title: 'DeletedWebhook' })

const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], { title: 'WebhookDeliveryStatus' })

export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer(),
  attempted_at: Type.String({ format: 'date-time' }),
  status_code: Nullable(Type.Integer({ description: 'HTTP status; null when no response arrived' })),
  latency_ms: Type.Number(),
  error: Nullable(Type.String()),
}, { title: 'WebhookDeliveryAttempt' })

export const Delivery = Type.Object({
  id: Type.String({ description: 'the message id (webhook-id header and body id), the same on every attempt; prefix msg_' }),
  type: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Array(DeliveryAttempt),
  next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
  delivered_at: Nullable(Type.String({ format: 'date-time' })),
  occurred_at: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
}, { title: 'WebhookDelivery' })
export type Delivery = Static<typeof Delivery>

export const DeliveriesQuery = Type.Object({ status: Type.Optional(DeliveryStatus), ...pageQuery(), cursor: ListingCursor }, { additionalProperties: false })
export const DeliveriesPage = Page(Delivery, 'WebhookDeliveriesPage')
export const DeliveryEnvelope = Type.Object({ success: Type.Boolean(), delivery: Delivery }, { title: 'WebhookDeliveryEnvelope' })
