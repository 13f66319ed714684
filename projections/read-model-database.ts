import type { OrganizationsTables } from './organizations/tables.js'
import type { ShipmentsTables } from './shipments/tables.js'
import type { CarriersTables } from './carriers/tables.js'
import type { TariffsTables } from './tariffs/tables.js'

/** Every read-model table, in schema `read_model`. Analysts: `set search_path = read_model`. */
export interface ReadModelDatabase extends OrganizationsTables, ShipmentsTables, CarriersTables, TariffsTables {
  projection_checkpoints: { name: string; checkpoint: string; updated_at: Date }
}
