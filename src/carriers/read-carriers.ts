import { CarrierEnvelope, CarrierIdParams, CarrierList } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { carrierIdOf, organizationOf } from '../http/plugins/auth.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireCarriersEnabled } from './carriers-enabled.js'
import { carrierView, listCarriers, ownedCarrier } from './queries.js'

/** Hub: list and read the organization's carriers. */
export const readCarrierRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/carriers', {
    schema: { tags: ['carrier hub'], summary: "List the organization's carriers", response: { 200: CarrierList, ...errorResponses } },
  }, async (req) => {
    const org = organizationOf(req)
    requireCarriersEnabled(org)
    return { carriers: await listCarriers(platform.rm, org.id) }
  })

  app.get('/carriers/:id', {
    schema: { tags: ['carrier hub'], summary: 'Read a carrier', params: CarrierIdParams, response: { 200: CarrierEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const org = organizationOf(req)
    requireCarriersEnabled(org)
    const { id } = req.params
    await ownedCarrier(platform.rm, org.id, id)
    return { carrier: await carrierView(platform.rm, id) }
  })
}

/** Carrier API: `GET /me` confirms the key works. */
export const readMeRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/me', {
    schema: { tags: ['carrier API'], summary: 'The carrier behind the API key', response: { 200: CarrierEnvelope, 401: ErrorResponse } },
  }, async (req) => ({ carrier: await carrierView(platform.rm, carrierIdOf(req)) }))
}
