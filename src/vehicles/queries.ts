import type { Selectable, Kysely } from 'kysely'
import type { Vehicle } from '../../schemas/api/vehicles.js'
import type { VehiclesTable } from '../../projections/vehicles/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { plateKey } from './vehicle.js'
import { iso } from '../shared/rows.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { keyAt, seekConditions, summed, type ListingColumns } from '../http/listing-sql.js'

type VehicleRow = Selectable<VehiclesTable>


export const toVehicle = (r: VehicleRow): Vehicle => ({
  id: r.id, name: r.name, plate: r.plate,
  capacity: { grams: r.capacity_grams, volume_cm3: r.capacity_volume_cm3, packages: r.capacity_packages },
  created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})

/** A vehicle of the organization, or undefined (another organization's vehicles are unknown). */
export const findVehicle = (db: Kysely<ReadModelDatabase>, orgId: string, vehicleId: string) =>
  db.selectFrom('vehicles').selectAll().where('id', '=', vehicleId).where('organization_id', '=', orgId).executeTakeFirst()

const KEY: ListingColumns = { at: 'created_at', atKind: 'instant', id: 'id', idType: 'text', order: 'asc' }

/** The organization's vehicles oldest first: its total from vehicle_listing_counts, a page through its index (issue 32). */
export async function listVehicles(db: Kysely<ReadModelDatabase>, orgId: string, page: PageRequest, after?: ListingKey) {
  const total = async () => summed(await db.selectFrom('vehicle_listing_counts').select('n').where('organization_id', '=', orgId).execute())
  const { shown, ...listed } = await readPage({ days: undefined, countTotal: total, order: 'asc', page, after, read: async (seek, limit) => {
    let q = db.selectFrom('vehicles').selectAll().select(keyAt(KEY).as('at')).where('organization_id', '=', orgId)
    for (const c of seekConditions(KEY, seek)) q = q.where(c)
    const rows = await q.orderBy('created_at').orderBy('id').offset(seek.skip).limit(limit).execute()
    return rows.map(({ at, ...row }) => ({ row, key: { at, id: row.id } }))
  } })
  return { rows: shown.map((r) => r.row), ...listed }
}

/** Another vehicle of the organization with this plate (compared by plateKey), if any. */
export const plateTaken = async (db: Kysely<ReadModelDatabase>, orgId: string, plate: string, exceptVehicleId?: string): Promise<boolean> => {
  let q = db.selectFrom('vehicles').select('id').where('organization_id', '=', orgId).where('plate_key', '=', plateKey(plate))
  if (exceptVehicleId) q = q.where('id', '!=', exceptVehicleId)
  return (await q.executeTakeFirst()) !== undefined
}
