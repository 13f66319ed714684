import type { FastifyInstance } from 'fastify'
import { AdminCarrierIdParams, CarrierEnvelope, CertificationBody } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { ConflictError, NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { actorOf } from '../http/plugins/auth.js'
import type { Platform } from '../platform.js'
import { carrierStream, evolve, initialState, type CarrierEvent, type CarrierState } from './carrier.js'
import { carrierView } from './queries.js'

export interface DecideCertification {
  type: 'DecideCertification'
  data: { status: 'certified' | 'rejected'; now: Date }
}

/** The platform operator certifies (or rejects) a public carrier; a private one needs none. */
export function decide(command: DecideCertification, state: CarrierState): CarrierEvent[] {
  if (!state.exists) throw new NotFoundError('Carrier')
  if (state.visibility !== 'public') throw new ConflictError('Only a public carrier is certified.', 'certification_not_required')
  if (state.certification === command.data.status) return []
  return [{ type: 'CarrierCertificationDecided', data: { status: command.data.status, decided_at: command.data.now.toISOString() } }]
}

export const decider: Decider<CarrierState, DecideCertification, CarrierEvent> = { decide, evolve, initialState }

export async function certificationRoutes(app: FastifyInstance, { platform }: { platform: Platform }) {
  app.post('/carriers/:carrier_id/certification', {
    schema: {
      tags: ['admin'], summary: 'Certify or reject a public carrier', params: AdminCarrierIdParams, body: CertificationBody,
      response: { 200: CarrierEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const { carrier_id } = req.params as { carrier_id: string }
    const { status } = req.body as { status: 'certified' | 'rejected' }
    const now = platform.clock()
    await handleCommand(platform.commands, carrierStream(carrier_id), decider, { type: 'DecideCertification', data: { status, now } }, { now, actor: actorOf(req), requestId: req.id })
    return { carrier: await carrierView(platform, carrier_id) }
  })
}
