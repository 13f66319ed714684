import type { Projection } from './projection.js'
import { shipmentsProjection } from './shipments/shipments-projection.js'
import { organizationsProjection } from './organizations/organizations-projection.js'
import { organizationSettingsProjection } from './organization-settings/organization-settings-projection.js'
import { carriersProjection } from './carriers/carriers-projection.js'
import { tariffsProjection } from './tariffs/tariffs-projection.js'
import { usersProjection } from './users/users-projection.js'
import { vehiclesProjection } from './vehicles/vehicles-projection.js'
import { blueprintsProjection } from './blueprints/blueprints-projection.js'
import { webhooksProjection } from './webhooks/webhooks-projection.js'
import { tasksProjection } from './tasks/tasks-projection.js'
import { workflowsProjection } from './workflows/workflows-projection.js'
import { routeFeedProjection } from './route-feed/route-feed-projection.js'
import { routesProjection } from './routes/routes-projection.js'

/** Every read-model projection the runner drives (and `rebuild` replays). */
export const allProjections: Projection[] = [
  organizationsProjection,
  organizationSettingsProjection,
  shipmentsProjection,
  carriersProjection,
  tariffsProjection,
  usersProjection,
  vehiclesProjection,
  blueprintsProjection,
  webhooksProjection,
  tasksProjection,
  workflowsProjection,
  routeFeedProjection,
  routesProjection,
]
