import { AdminCarrierIdParams, CarrierEnvelope, CertificationBody } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { carrierStream, evolve, initialState, type CarrierEvent, type CarrierState } from './carrier.js'
import { carrierView } from './queries.js'

export interface DecideCertification {
  type: 'DecideCertification'
  data: { status: 'certified' | 'rejected'; now: Date }
}

/** The platform operator certifies (or rejects) a public carrier; a private one needs none. */
export function decide(command: DecideCertification, state: CarrierState): CarrierEvent[] {
  if (!state.exists) throw new NotFoundError('Carrier')
  if (state.visibility !== 'public') throw new IllegalStateError('Only a public carrier is certified.', 'certification_not_required')
  if (state.certification === command.data.status) return []
  return [{ type: 'CarrierCertificationDecided', data: { status: command.data.status, decided_at: command.data.now.toISOString() } }]
}

export const decider: Decider<CarrierState, DecideCertification, CarrierEvent> = { decide, evolve, initialState }

export const certificationRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/carriers/:carrier_id/certification', {
    schema: {
      tags: ['admin'], summary: 'Certify or reject a public carrier', params: AdminCarrierIdParams, body: CertificationBody,
      response: { 200: CarrierEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const { carrier_id } = req.params
    const { status } = req.body
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, carrierStream(carrier_id), decider, { type: 'DecideCertification', data: { status, now: ctx.now } }, ctx)
    return { carrier: await carrierView(platform.rm, carrier_id) }
  })
}
