import { Type, type Static } from 'typebox'

/**
 * The webhook body sent to a custom carrier's notification URL (DESIGN §3.6). Notifications are
 * derived from shipment events and kept in platform tables (not events of their own), so this is
 * the wire contract rather than a stored event payload.
 */
export const NotificationEvent = Type.Union([
  Type.Literal('new'), Type.Literal('ready_to_ship'), Type.Literal('cancelled'), Type.Literal('expired'),
])
export type NotificationEvent = Static<typeof NotificationEvent>

export const NotificationBody = Type.Object({
  notification_id: Type.String(),
  event: NotificationEvent,
  shipment_id: Type.Integer(),
  carrier_id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
})
export type NotificationBody = Static<typeof NotificationBody>
