import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, Page, pageQuery } from './common.js'

const Name = Type.String({ minLength: 1, maxLength: 100 })
const Plate = Type.String({ minLength: 1, maxLength: 20, pattern: '^[A-Za-z0-9][A-Za-z0-9 .-]*$', description: 'letters, digits, spaces, dots and dashes; unique in the organization (compared without spaces, dots, dashes or case)' })

// Bounds a road vehicle cannot reach: a typo (kilograms sent as tonnes of grams) is caught as a 422.
const dimension = (max: number, description: string) => Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: max, description })))

export const CapacityInput = Type.Object({
  grams: dimension(100_000_000, 'payload in grams (≤ 100 t); missing or null: unlimited'),
  volume_cm3: dimension(1_000_000_000, 'load volume in cm³ (≤ 1,000 m³); missing or null: unlimited'),
  packages: dimension(100_000, 'number of packages; missing or null: unlimited'),
}, { title: 'CapacityInput', additionalProperties: false })

export const Capacity = Type.Object({
  grams: Nullable(Type.Integer()),
  volume_cm3: Nullable(Type.Integer()),
  packages: Nullable(Type.Integer()),
}, { title: 'Capacity', description: 'null: unlimited in that dimension' })

export const Vehicle = Type.Object({
  id: Type.String({ description: 'public id, prefix veh_' }),
  name: Type.String(),
  plate: Type.String(),
  capacity: Capacity,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'Vehicle' })
export type Vehicle = Static<typeof Vehicle>

export const CreateVehicleBody = Type.Object({
  name: Name,
  plate: Plate,
  capacity: Type.Optional(CapacityInput),
}, { title: 'CreateVehicleRequest', additionalProperties: false })
export type CreateVehicleBody = Static<typeof CreateVehicleBody>

/** `capacity` changes only the dimensions it names (null makes one unlimited). */
export const UpdateVehicleBody = Type.Object({
  name: Type.Optional(Name),
  plate: Type.Optional(Plate),
  capacity: Type.Optional(CapacityInput),
}, { title: 'UpdateVehicleRequest', additionalProperties: false, minProperties: 1 })
export type UpdateVehicleBody = Static<typeof UpdateVehicleBody>

export const VehicleIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
export const VehiclesQuery = Type.Object({ ...pageQuery(), cursor: ListingCursor }, { additionalProperties: false })

export const VehicleEnvelope = Type.Object({ success: Type.Boolean(), vehicle: Vehicle }, { title: 'VehicleEnvelope' })
export const VehiclesPage = Page(Vehicle, 'VehiclesPage')
