import { VehicleEvents, type VehicleCapacity } from '../../schemas/events/vehicles.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { requireOwned } from '../shared/ownership.js'
import type { Decider } from '../shared/decider.js'
import { stream } from '../../schemas/events/streams.js'

/** The vehicle aggregate (DESIGN §3.9): a carrier organization's vehicle and its capacity; stream `vehicle-<veh_id>`. */
export type VehicleEvent = EventOf<typeof VehicleEvents>

export interface VehicleState {
  exists: boolean
  organizationId: string | null
  name: string
  plate: string
  capacity: VehicleCapacity
}

export const unlimited: VehicleCapacity = { grams: null, volume_cm3: null, packages: null }

export const vehicleStream = stream.vehicle

export const initialState = (): VehicleState => ({ exists: false, organizationId: null, name: '', plate: '', capacity: unlimited })

export function evolve(state: VehicleState, event: VehicleEvent): VehicleState {
  switch (event.type) {
    case 'VehicleCreated': {
      const d = event.data
      return { exists: true, organizationId: d.organization_id, name: d.name, plate: d.plate, capacity: d.capacity }
    }
    case 'VehicleUpdated': {
      const d = event.data
      return { ...state, name: d.name ?? state.name, plate: d.plate ?? state.plate, capacity: d.capacity ?? state.capacity }
    }
    default:
      return state
  }
}

/** A command on an existing vehicle of the caller's organization (another tenant's vehicle is unknown). */
export function requireVehicle(state: VehicleState, organizationId: string): void {
  requireOwned(state, organizationId, 'Vehicle')
}

/** The capacity given (missing dimensions unlimited) laid over `base`, dimension by dimension. */
export function capacityOf(input: Partial<Record<keyof VehicleCapacity, number | null>> | undefined, base: VehicleCapacity = unlimited): VehicleCapacity {
  const pick = (k: keyof VehicleCapacity) => (input && input[k] !== undefined ? input[k]! : base[k])
  return { grams: pick('grams'), volume_cm3: pick('volume_cm3'), packages: pick('packages') }
}

/** Plates compare without case, spaces, dots or dashes: "AB 123-CD" and "ab123cd" are one plate. */
export const plateKey = (plate: string) => plate.replace(/[\s.-]/g, '').toUpperCase()

export const vehicleDeciderOf = <C>(decide: (command: C, state: VehicleState) => VehicleEvent[]): Decider<VehicleState, C, VehicleEvent> =>
  ({ decide, evolve, initialState })
