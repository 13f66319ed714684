import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { NotificationEvent } from '../../schemas/events/notifications.js'
import type { ShipmentEvents } from '../../schemas/events/shipments.js'
import { idOf } from '../../schemas/events/streams.js'
import { fieldOf, textOf } from '../infrastructure/event-store/payload.js'

/** Shipment events that become carrier webhooks (spec "Events"), read by any event's type. */
export const NOTIFIED_EVENTS: Readonly<Record<string, NotificationEvent>> = {
  ShipmentCreated: 'new',
  ShipmentReady: 'ready_to_ship',
  ShipmentCancelled: 'cancelled',
  ShipmentExpired: 'expired',
} satisfies { [K in keyof typeof ShipmentEvents]?: NotificationEvent }

export const shipmentIdOf = (e: Pick<RecordedEvent, 'streamId'>): number => idOf.shipment(e.streamId)!

/** What the notifier needs from a ShipmentCreated: who carries it and how it is integrated. */
export function carrierOfCreated(e: RecordedEvent): { carrierId: string | null; integration: string; createdAt: string } {
  return {
    carrierId: textOf(fieldOf(e.data, 'service_type'), 'carrier_hub_id') ?? null,
    integration: textOf(e.data, 'integration') ?? 'custom',
    createdAt: textOf(e.data, 'created_at') ?? e.metadata.occurred_at,
  }
}

/**
 * Whether a shipment's carrier gets webhooks: only a hub carrier on the `custom` integration
 * (a `service_routes` carrier receives none, spec "Events" rule 4).
 */
export const notifiable = (s: { carrierId: string | null; integration: string }): s is { carrierId: string; integration: 'custom' } =>
  s.carrierId !== null && s.integration === 'custom'
