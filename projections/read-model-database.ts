import type { OrganizationsTables } from './organizations/tables.js'

/** Every read-model table, in schema `read_model`. Analysts: `set search_path = read_model`. */
export interface ReadModelDatabase extends OrganizationsTables {
  projection_checkpoints: { name: string; checkpoint: string; updated_at: Date }
}
