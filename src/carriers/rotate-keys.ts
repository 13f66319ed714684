import { CarrierIdParams, CarrierWithCredentials } from '../../schemas/api/carriers.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { carrierStream, evolve, initialState, type CarrierEvent, type CarrierState } from './carrier.js'
import { requireCarriersEnabled } from './carriers-enabled.js'
import { newCredentials, ROTATION_OVERLAP_MS } from './credentials.js'
import { carrierView, ownedCarrier } from './queries.js'

export interface RotateCredentials {
  type: 'RotateCredentials'
  data: { key_id: string; key_hash: string; secret_id: string; secret_encrypted: string; now: Date }
}

/** New key and secret; the ones valid so far keep working for 24 h, so the carrier can switch without downtime. */
export function decide(command: RotateCredentials, state: CarrierState): CarrierEvent[] {
  if (!state.exists) throw new NotFoundError('Carrier')
  const d = command.data
  return [{
    type: 'CarrierCredentialsIssued',
    data: {
      key_id: d.key_id, key_hash: d.key_hash, secret_id: d.secret_id, secret_encrypted: d.secret_encrypted,
      issued_at: d.now.toISOString(), previous_expire_at: new Date(d.now.getTime() + ROTATION_OVERLAP_MS).toISOString(),
    },
  }]
}

export const decider: Decider<CarrierState, RotateCredentials, CarrierEvent> = { decide, evolve, initialState }

export const rotateKeysRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/carriers/:id/keys', {
    schema: {
      tags: ['carrier hub'],
      summary: 'Rotate the API key and HMAC secret (the old ones stay valid for 24 h); shown once',
      params: CarrierIdParams,
      response: { 201: CarrierWithCredentials, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    requireCarriersEnabled(org)
    const { id } = req.params
    await ownedCarrier(platform.rm, org.id, id)
    const creds = newCredentials(platform.secretsKey)
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, carrierStream(id), decider, {
      type: 'RotateCredentials',
      data: { key_id: creds.keyId, key_hash: creds.keyHash, secret_id: creds.secretId, secret_encrypted: creds.secretEncrypted, now: ctx.now },
    }, ctx)
    return reply.code(201).send({ carrier: await carrierView(platform.rm, id), api_key: creds.apiKey, hmac_secret: creds.hmacSecret, key_id: creds.keyId })
  })
}
