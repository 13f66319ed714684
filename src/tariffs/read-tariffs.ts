import { TariffEnvelope, TariffIdParams, TariffList } from '../../schemas/api/tariffs.js'
import { ErrorResponse } from '../../schemas/api/common.js'
import { tariffOf, tariffsOf } from './queries.js'
import type { RoutesPlugin } from '../http/module.js'
import { carrierIdOf } from '../http/plugins/auth.js'

/** Carrier API reads: the calling carrier's tariffs. */
export const readTariffRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/tariffs', {
    schema: { tags: ['carrier API'], summary: "The carrier's tariffs", response: { 200: TariffList, 401: ErrorResponse } },
  }, async (req) => ({ tariffs: await tariffsOf(platform.rm, carrierIdOf(req)) }))

  app.get('/tariffs/:tariff_id', {
    schema: { tags: ['carrier API'], summary: 'One tariff', params: TariffIdParams, response: { 200: TariffEnvelope, 404: ErrorResponse, 401: ErrorResponse } },
  }, async (req) => ({ tariff: await tariffOf(platform.rm, carrierIdOf(req), req.params.tariff_id) }))
}
