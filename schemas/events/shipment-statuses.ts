import { Type, type Static } from 'typebox'

// Stream `shipment-statuses-<org id>`: an organization's names and colours of the shipment statuses.

export const ShipmentStatusCustomized = Type.Object({
  organization_id: Type.String(),
  code: Type.String(),
  /** Null resets the name to the platform default. */
  name: Type.Union([Type.String(), Type.Null()]),
  color: Type.Union([Type.String(), Type.Null()]),
  customized_at: Type.String(),
})
export type ShipmentStatusCustomized = Static<typeof ShipmentStatusCustomized>

/** The event of a `shipment-statuses-<organization>` stream. */
export const StatusCatalogEvents = { ShipmentStatusCustomized } as const
