import type { HttpModule } from './http/module.js'
import { organizationsModule } from './organizations/index.js'
import { shipmentsModule } from './shipments/index.js'
import { carriersModule } from './carriers/index.js'
import { tariffsModule } from './tariffs/index.js'
import { quotesModule } from './quotes/index.js'
import { notificationsModule } from './notifications/index.js'
import { usersModule } from './users/index.js'
import { vehiclesModule } from './vehicles/index.js'
import { blueprintsModule } from './blueprints/index.js'
import { webhooksModule } from './webhooks/index.js'
import { tasksModule } from './tasks/index.js'
import { workflowsModule } from './workflows/index.js'
import { routeProgressModule } from './routes/progress/index.js'
import { routesModule } from './routes/index.js'
import { auditModule } from './audit/index.js'
import { positionsModule } from './positions/index.js'
import { trackingModule } from './tracking/index.js'
import { driverAppModule } from './driver/index.js'

/** Every business module, in the order their routes are registered. */
export const modules: HttpModule[] = [
  organizationsModule,
  shipmentsModule,
  carriersModule,
  tariffsModule,
  quotesModule,
  notificationsModule,
  usersModule,
  vehiclesModule,
  blueprintsModule,
  webhooksModule,
  tasksModule,
  workflowsModule,
  routesModule,
  routeProgressModule,
  positionsModule,
  auditModule,
  trackingModule,
  driverAppModule,
]
