import type { HttpModule } from '../http/module.js'
import { trackingRoutes } from './tracking-routes.js'

/** Public tracking of shipments (DESIGN §3.10): the page a recipient opens from `public_tracking_url`. */
export const trackingModule: HttpModule = {
  name: 'tracking',
  publicRoutes: trackingRoutes,
}
