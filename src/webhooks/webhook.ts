import { WebhookEvents } from '../../schemas/events/webhooks.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { requireOwned } from '../shared/ownership.js'
import type { Decider } from '../shared/decider.js'
import { stream } from '../../schemas/events/streams.js'

/** The organization webhook aggregate (DESIGN §3.9); stream `webhook-<whk_id>`. */
export type WebhookEvent = EventOf<typeof WebhookEvents>

export interface WebhookState {
  exists: boolean
  organizationId: string | null
  deleted: boolean
}

export const webhookStream = stream.webhook

export const initialState = (): WebhookState => ({ exists: false, organizationId: null, deleted: false })

export function evolve(state: WebhookState, event: WebhookEvent): WebhookState {
  switch (event.type) {
    case 'WebhookCreated':
      return { exists: true, organizationId: event.data.organization_id, deleted: false }
    case 'WebhookDeleted':
      return { ...state, deleted: true }
    default:
      return state
  }
}

/** A live webhook of the caller's organization; another tenant's, or a deleted one, is unknown. */
export function requireWebhook(state: WebhookState, organizationId: string): void {
  requireOwned({ ...state, exists: state.exists && !state.deleted }, organizationId, 'Webhook')
}

export const webhookDeciderOf = <C>(decide: (command: C, state: WebhookState) => WebhookEvent[]): Decider<WebhookState, C, WebhookEvent> =>
  ({ decide, evolve, initialState })
