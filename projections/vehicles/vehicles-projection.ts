import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { VehicleEvents, type VehicleCapacity } from '../../schemas/events/vehicles.js'
import { defineProjection, type Projection } from '../projection.js'
import { writesOnly } from '../recorded-writes.js'
import { idOf } from '../../schemas/events/streams.js'
import { sql } from 'kysely'

const vehicleIdOf = (e: RecordedEvent) => idOf.vehicle(e.streamId)!
// Kept beside the projection (projections import no request-path code): the same rule as src/vehicles.
const plateKey = (plate: string) => plate.replace(/[\s.-]/g, '').toUpperCase()
const capacityColumns = (c: VehicleCapacity) => ({ capacity_grams: c.grams, capacity_volume_cm3: c.volume_cm3, capacity_packages: c.packages })

/** vehicles: one row per vehicle, capacity in one column per dimension (null: unlimited); vehicle_listing_counts. */
export const vehiclesProjection: Projection = writesOnly(defineProjection({
  name: 'vehicles',
  events: VehicleEvents,
  async apply(db, events) {
    for (const e of events) {
      if (e.type === 'VehicleCreated') {
        const d = e.data
        // One statement (this projection only writes): the count moves only if the row was inserted.
        await db.with('created', (w) => w.insertInto('vehicles').values({
          id: d.id, organization_id: d.organization_id, name: d.name, plate: d.plate, plate_key: plateKey(d.plate),
          ...capacityColumns(d.capacity), created_at: d.created_at, updated_at: d.created_at,
        }).onConflict((oc) => oc.column('id').doNothing()).returning('organization_id'))
          .insertInto('vehicle_listing_counts').columns(['organization_id', 'n'])
          .expression((eb) => eb.selectFrom('created').select(['organization_id', sql<string>`count(*)`.as('n')]).groupBy('organization_id'))
          .onConflict((oc) => oc.column('organization_id').doUpdateSet({ n: sql`vehicle_listing_counts.n + excluded.n` })).execute()
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
