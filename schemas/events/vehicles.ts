import { Type, type Static } from 'typebox'

// Event payloads of the vehicle stream `vehicle-<veh_id>`, version 1 (DESIGN §1: upcast on read, never rewritten).

/** Per dimension: an integer ≥ 0, or null for unlimited (DESIGN §3.9: a missing dimension is unlimited). */
export const VehicleCapacity = Type.Object({
  grams: Type.Union([Type.Integer(), Type.Null()]),
  volume_cm3: Type.Union([Type.Integer(), Type.Null()]),
  packages: Type.Union([Type.Integer(), Type.Null()]),
})
export type VehicleCapacity = Static<typeof VehicleCapacity>

export const VehicleCreated = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  plate: Type.String(),
  capacity: VehicleCapacity,
  created_at: Type.String(),
})
export type VehicleCreated = Static<typeof VehicleCreated>

/** Only the fields the update changed; `capacity` is the whole capacity after the change. */
export const VehicleUpdated = Type.Object({
  name: Type.Optional(Type.String()),
  plate: Type.Optional(Type.String()),
  capacity: Type.Optional(VehicleCapacity),
  updated_at: Type.String(),
})
export type VehicleUpdated = Static<typeof VehicleUpdated>

/** The events of a `vehicle-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const VehicleEvents = { VehicleCreated, VehicleUpdated } as const
