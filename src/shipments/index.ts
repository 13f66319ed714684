import type { HttpModule } from '../http/module.js'
import { createShipmentRoutes } from './create-shipment.js'
import { readShipmentRoutes } from './read-shipments.js'
import { cancelShipmentRoutes } from './cancel-shipment.js'
import { markReadyRoutes } from './mark-ready.js'
import { uploadDocumentsRoutes } from './upload-documents.js'
import { setTrackingRoutes } from './set-tracking.js'
import { reportCarrierStatusRoutes } from './report-carrier-status.js'
import { carrierReadShipmentRoutes } from './carrier-read-shipments.js'
import { trackingRoutes } from './tracking.js'
import { attachmentRoutes } from './attachments.js'
import { labelRoutes } from './label.js'
import { statusCatalogRoutes } from './status-catalog-routes.js'
import { customizeStatusRoutes } from './customize-status.js'

/** Routes API: shipments, their tracking, attachments, labels, audit, and the status catalog; carrier API: the carrier's shipments. */
export const shipmentsModule: HttpModule = {
  name: 'shipments',
  async routes(app, opts) {
    await app.register(createShipmentRoutes, opts)
    await app.register(readShipmentRoutes, opts)
    await app.register(cancelShipmentRoutes, opts)
    await app.register(markReadyRoutes, opts)
    await app.register(trackingRoutes, opts)
    await app.register(attachmentRoutes, opts)
    await app.register(labelRoutes, opts)
    await app.register(statusCatalogRoutes, opts)
    await app.register(customizeStatusRoutes, opts)
  },
  /** The carrier's side of its shipments: the feed, the detail, and its commands. */
  async carrierRoutes(app, opts) {
    await app.register(uploadDocumentsRoutes, opts)
    await app.register(carrierReadShipmentRoutes, opts)
    await app.register(setTrackingRoutes, opts)
    await app.register(reportCarrierStatusRoutes, opts)
  },
}
