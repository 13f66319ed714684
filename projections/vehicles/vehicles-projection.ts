import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { VehicleEvents, type VehicleCapacity } from '../../schemas/events/vehicles.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'

const vehicleIdOf = (e: RecordedEvent) => idOf.vehicle(e.streamId)!
// Kept beside the projection (projections import no request-path code): the same rule as src/vehicles.
const plateKey = (plate: string) => plate.replace(/[\s.-]/g, '').toUpperCase()
const capacityColumns = (c: VehicleCapacity) => ({ capacity_grams: c.grams, capacity_volume_cm3: c.volume_cm3, capacity_packages: c.packages })

/** vehicles: one row per vehicle, capacity in one column per dimension (null: unlimited). */
export const vehiclesProjection: Projection = writesOnly(defineProjection({
  name: 'vehicles',
  events: VehicleEvents,
  async apply(db, events) {
    for (const e of events) {
      if (e.type === 'VehicleCreated') {
        const d = e.data
        await db.insertInto('vehicles').values({
          id: d.id, organization_id: d.organization_id, name: d.name, plate: d.plate, plate_key: plateKey(d.plate),
          ...capacityColumns(d.capacity), created_at: d.created_at, updated_at: d.created_at,
        }).onConflict((oc) => oc.column('id').doNothing()).execute()
      } else if (e.type === 'VehicleUpdated') {
        const { updated_at, name, plate, capacity } = e.data
        await db.updateTable('vehicles').set({
          updated_at,
          ...(name !== undefined ? { name } : {}),
          ...(plate !== undefined ? { plate, plate_key: plateKey(plate) } : {}),
          ...(capacity ? capacityColumns(capacity) : {}),
        }).where('id', '=', vehicleIdOf(e)).execute()
      }
    }
  },
}))
