import { CarrierShipment, CarrierShipmentPage, CarrierShipmentParams, CarrierShipmentsQuery } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { carrierShipment, shipmentFeed } from './carrier-shipments.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { carrierIdOf } from '../http/plugins/auth.js'
import { trackingLinks } from './tracking-link.js'

/** Carrier API reads: the change feed of the carrier's shipments and one shipment with `custom_data`. */
export const carrierReadShipmentRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/shipments', {
    schema: {
      tags: ['carrier API'], summary: 'Shipments of this carrier changed since a time or cursor (change feed; never skips, never repeats an unchanged one)',
      querystring: CarrierShipmentsQuery,
      response: { 200: CarrierShipmentPage, ...errorResponses },
    },
  }, async (req, reply) => shipmentFeed(readsOf(platform, reply), carrierIdOf(req), req.query, trackingLinks(req, platform)))

  app.get('/shipments/:shipment_id', {
    schema: { tags: ['carrier API'], summary: 'The full shipment, with custom_data (the quote that priced it)', params: CarrierShipmentParams, response: { 200: CarrierShipment, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => carrierShipment(platform, carrierIdOf(req), req.params.shipment_id, trackingLinks(req, platform)))
}
