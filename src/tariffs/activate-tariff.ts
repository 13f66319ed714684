import { TariffEnvelope, TariffIdParams } from '../../schemas/api/tariffs.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { carrierIdOf } from '../http/plugins/auth.js'
import { requireCarrierTariff, tariffDeciderOf, tariffStream, type TariffEvent, type TariffState } from './tariff.js'
import { tariffOf } from './queries.js'
import type { RoutesPlugin } from '../http/module.js'
import { commandContext } from '../http/command-context.js'

/** Slice "activate a tariff": the carrier's `POST /tariffs/{id}/activate` (needs published rates). */

export type ActivateTariff = { type: 'ActivateTariff'; data: { carrier_id: string; now: Date } }

export function decide(command: ActivateTariff, state: TariffState): TariffEvent[] {
  requireCarrierTariff(state, command.data.carrier_id)
  if (!state.hasRates) throw new IllegalStateError('A tariff without rates cannot be activated; publish its rates first.', 'tariff_without_rates')
  return [{ type: 'TariffActivated', data: { carrier_id: state.carrierId!, service_type_id: state.serviceTypeId!, activated_at: command.data.now.toISOString() } }]
}

export const decider = tariffDeciderOf(decide)

export const activateTariffRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tariffs/:tariff_id/activate', {
    schema: { tags: ['carrier API'], summary: 'Make this the active tariff of its service type (needs published rates)', params: TariffIdParams, response: { 200: TariffEnvelope, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const carrierId = carrierIdOf(req)
    const { tariff_id } = req.params
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, tariffStream(tariff_id), decider, { type: 'ActivateTariff', data: { carrier_id: carrierId, now: ctx.now } }, ctx)
    return { tariff: await tariffOf(platform.rm, carrierId, tariff_id) }
  })
}
