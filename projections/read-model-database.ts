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

/** Every read-model table, in schema `read_model`. Analysts: `set search_path = read_model`. */
export interface ReadModelDatabase extends OrganizationsTables, ShipmentsTables, CarriersTables, TariffsTables, UsersTables, VehiclesTables, BlueprintsTables, WebhooksTables, TasksTables, WorkflowsTables, RoutesTables, RouteFeedTables, EtaTables {
  projection_checkpoints: { name: string; checkpoint: string; updated_at: Date }
}
