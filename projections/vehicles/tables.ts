import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>

/** Vehicles; a null capacity column is unlimited in that dimension. */
export interface VehiclesTable {
  id: string
  organization_id: string
  name: string
  plate: string
  /** The plate without case, spaces, dots or dashes: one vehicle per key in an organization. */
  plate_key: string
  capacity_grams: number | null
  capacity_volume_cm3: number | null
  capacity_packages: number | null
  created_at: Ts
  updated_at: Ts
}

export interface VehiclesTables {
  vehicles: VehiclesTable
}
