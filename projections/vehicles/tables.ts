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

/** An organization's vehicles: the listing's `meta.total` (issue 32). */
export interface VehicleListingCountsTable {
  organization_id: string
  n: ColumnType<string, number | string, number | string>
}

export interface VehiclesTables {
  vehicle_listing_counts: VehicleListingCountsTable
  vehicles: VehiclesTable
}
