import type { Selectable, Kysely } from 'kysely'
import type { Vehicle } from '../../schemas/api/vehicles.js'
import type { VehiclesTable } from '../../projections/vehicles/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { plateKey } from './vehicle.js'
import { iso } from '../shared/rows.js'

type VehicleRow = Selectable<VehiclesTable>


export const toVehicle = (r: VehicleRow): Vehicle => ({
  id: r.id, name: r.name, plate: r.plate,
  capacity: { grams: r.capacity_grams, volume_cm3: r.capacity_volume_cm3, packages: r.capacity_packages },
  created_at: iso(r.created_at), updated_at: iso(r.updated_at),
})

/** A vehicle of the organization, or undefined (another organization's vehicles are unknown). */
export const findVehicle = (db: Kysely<ReadModelDatabase>, orgId: string, vehicleId: string) =>
  db.selectFrom('vehicles').selectAll().where('id', '=', vehicleId).where('organization_id', '=', orgId).executeTakeFirst()

export async function listVehicles(db: Kysely<ReadModelDatabase>, orgId: string, page: PageRequest) {
  const q = db.selectFrom('vehicles').where('organization_id', '=', orgId)
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('created_at').orderBy('id').limit(page.perPage).offset((page.page - 1) * page.perPage).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Another vehicle of the organization with this plate (compared by plateKey), if any. */
export const plateTaken = async (db: Kysely<ReadModelDatabase>, orgId: string, plate: string, exceptVehicleId?: string): Promise<boolean> => {
  let q = db.selectFrom('vehicles').select('id').where('organization_id', '=', orgId).where('plate_key', '=', plateKey(plate))
  if (exceptVehicleId) q = q.where('id', '!=', exceptVehicleId)
  return (await q.executeTakeFirst()) !== undefined
}
