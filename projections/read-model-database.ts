import type { Kysely } from 'kysely'
import type { OrganizationsTables } from './organizations/tables.js'
import type { ShipmentsTables } from './shipments/tables.js'
import type { CarriersTables } from './carriers/tables.js'
import type { TariffsTables } from './tariffs/tables.js'
import type { UsersTables } from './users/tables.js'
import type { VehiclesTables } from './vehicles/tables.js'
import type { BlueprintsTables } from './blueprints/tables.js'
import type { WebhooksTables } from './webhooks/tables.js'
import type { TasksTables } from './tasks/tables.js'
import type { WorkflowsTables } from './workflows/tables.js'
import type { RouteFeedTables } from './route-feed/tables.js'
import type { RoutesTables } from './routes/tables.js'
import type { EtaTables } from './etas/tables.js'
import type { OrganizationSettingsTables } from './organization-settings/tables.js'

/** Every read-model table, in schema `read_model`. Analysts: `set search_path = read_model`. */
export interface ReadModelDatabase extends OrganizationsTables, ShipmentsTables, CarriersTables, TariffsTables, UsersTables, VehiclesTables, BlueprintsTables, WebhooksTables, TasksTables, WorkflowsTables, RoutesTables, RouteFeedTables, EtaTables, OrganizationSettingsTables {
  projection_checkpoints: { name: string; checkpoint: string; updated_at: Date }
  /** Events a projection could not apply (transactional-rounds parks them). */
  projection_parked: { projection: string; event_id: string; position: string; error: string }
}

/**
 * The read model in `schema` through any handle on its database (the platform's, a transaction, a
 * rebuild's scratch schema). The one place a handle is seen as the read model's: the tables are
 * created by the read-model migrations, not by the handle's own type.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const readModelIn = (db: Kysely<any>, schema: string): Kysely<ReadModelDatabase> => db.withSchema(schema)
