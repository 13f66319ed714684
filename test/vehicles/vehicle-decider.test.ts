import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as creation, type CreateVehicle } from '../../src/vehicles/create-vehicle.js'
import { decider as update } from '../../src/vehicles/update-vehicle.js'
import type { VehicleEvent } from '../../src/vehicles/vehicle.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-25T09:00:00Z')
const at = now.toISOString()
const capacity = { grams: 800_000, volume_cm3: null, packages: 120 }
const create: CreateVehicle = { type: 'CreateVehicle', data: { id: 'veh_1', organization_id: 'org_1', name: ' Van 1 ', plate: ' ab 123 cd ', capacity, now } }
const created: VehicleEvent = { type: 'VehicleCreated', data: { id: 'veh_1', organization_id: 'org_1', name: 'Van 1', plate: 'AB 123 CD', capacity, created_at: at } }

t.test('create: trimmed name, upper-case plate, the capacity as given; a second create is refused', async (t) => {
  DeciderSpecification.for(creation).given([]).when(create).then(t, [created])
  DeciderSpecification.for(creation).given([created]).when(create).thenThrows(t, IllegalStateError, { code: 'vehicle_exists' })
})

t.test('update: capacity changes only the dimensions named; null makes one unlimited; nothing changed, nothing recorded', async (t) => {
  const spec = DeciderSpecification.for(update)
  spec.given([created]).when({ type: 'UpdateVehicle', data: { organization_id: 'org_1', changes: { capacity: { grams: null, volume_cm3: 9_000_000 } }, now } })
    .then(t, [{ type: 'VehicleUpdated', data: { capacity: { grams: null, volume_cm3: 9_000_000, packages: 120 }, updated_at: at } }])
  spec.given([created]).when({ type: 'UpdateVehicle', data: { organization_id: 'org_1', changes: { name: 'Van 1', plate: 'ab 123 cd', capacity: { packages: 120 } }, now } })
    .thenNothingHappened(t)
  spec.given([created]).when({ type: 'UpdateVehicle', data: { organization_id: 'org_2', changes: { name: 'x' }, now } }).thenThrows(t, NotFoundError)
  spec.given([]).when({ type: 'UpdateVehicle', data: { organization_id: 'org_1', changes: { name: 'x' }, now } }).thenThrows(t, NotFoundError)
})
