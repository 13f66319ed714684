import type { HttpModule } from '../http/module.js'
import { driverAppRoutes } from './app-routes.js'

/** The driver's app at /driver (issue 38): static files; what it does, it does through the API with the driver's token. */
export const driverAppModule: HttpModule = {
  name: 'driver-app',
  publicRoutes: driverAppRoutes,
}
