import type { HttpModule } from '../http/module.js'
import { notificationRoutes } from './routes.js'

/** Carrier webhooks' delivery log and redelivery (carrier API). The sending is `src/processes/notifier.ts`. */
export const notificationsModule: HttpModule = {
  name: 'notifications',
  async carrierRoutes(app, opts) {
    await app.register(notificationRoutes, opts)
  },
}
