import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import type { ErrorBag } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { unlimited } from './route.js'
import { activeDriver, orgVehicle } from './queries.js'

// Checks of a route request's fields that several slices share (create, update, plan).

/** A calendar date that exists (the schema's `date` format checks the shape). */
export const realDate = (s: string) => { const t = Date.parse(`${s}T00:00:00Z`); return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === s }

/** Driver and vehicle of a body: active drivers and vehicles of the organization, else a 422 naming the field. */
export async function checkPeople(
  platform: Platform, orgId: string, body: { driver_id?: string | null | undefined; vehicle_id?: string | null | undefined }, bag: ErrorBag,
): Promise<{ capacity: VehicleCapacity | undefined }> {
  const [driver, vehicle] = await Promise.all([
    body.driver_id ? activeDriver(platform.rm, orgId, body.driver_id) : undefined,
    body.vehicle_id ? orgVehicle(platform.rm, orgId, body.vehicle_id) : undefined,
  ])
  if (body.driver_id && !driver) bag.add('driver_id', 'The selected driver id is not an active driver of your organization.')
  if (body.vehicle_id && !vehicle) bag.add('vehicle_id', 'The selected vehicle id is not a vehicle of your organization.')
  const n = (v: number | string | null) => (v === null ? null : Number(v))
  return {
    capacity: body.vehicle_id === undefined ? undefined
      : vehicle ? { grams: n(vehicle.capacity_grams), volume_cm3: n(vehicle.capacity_volume_cm3), packages: n(vehicle.capacity_packages) }
        : unlimited,
  }
}
