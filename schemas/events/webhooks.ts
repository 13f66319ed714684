import { Type, type Static } from 'typebox'

// Event payloads of the organization webhook stream `webhook-<whk_id>`, version 1 (DESIGN §3.9).

/**
 * A subscription. The `whsec_` secret is kept only sealed (AES-256-GCM under SECRETS_KEY, bound to
 * the webhook's id), as carrier HMAC secrets are: the event log never holds it in the clear.
 */
export const WebhookCreated = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  secret_encrypted: Type.String(),
  created_at: Type.String(),
})
export type WebhookCreated = Static<typeof WebhookCreated>

export const WebhookDeleted = Type.Object({ deleted_at: Type.String() })
export type WebhookDeleted = Static<typeof WebhookDeleted>

/** The events of a `webhook-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const WebhookEvents = { WebhookCreated, WebhookDeleted } as const
