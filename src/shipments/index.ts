import type { HttpModule } from '../http/module.js'
import { createShipmentRoutes } from './create-shipment.js'
import { readShipmentRoutes } from './read-shipments.js'
import { shipmentActionRoutes } from './shipment-actions.js'
import { trackingRoutes } from './tracking.js'
import { attachmentRoutes } from './attachments.js'
import { labelRoutes } from './label.js'
import { statusCatalogRoutes } from './status-catalog-routes.js'

/** Routes API: shipments, their tracking, attachments, labels, audit, and the status catalog. */
export const shipmentsModule: HttpModule = {
  name: 'shipments',
  async routes(app, opts) {
    await app.register(createShipmentRoutes, opts)
    await app.register(readShipmentRoutes, opts)
    await app.register(shipmentActionRoutes, opts)
    await app.register(trackingRoutes, opts)
    await app.register(attachmentRoutes, opts)
    await app.register(labelRoutes, opts)
    await app.register(statusCatalogRoutes, opts)
  },
}
