import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { readPositionsRoutes } from './read-positions.js'
import { reportPositionsRoutes } from './report-positions.js'

/** Drivers' positions (DESIGN §3.10): reported by drivers' apps, read by dispatchers, feeding the ETAs. */
export const positionsModule: HttpModule = {
  name: 'positions',
  routes: operationsRoutes(reportPositionsRoutes, readPositionsRoutes),
}
