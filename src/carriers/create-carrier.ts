import { CarrierWithCredentials, CreateCarrierBody, type CreateCarrierBody as Body } from '../../schemas/api/carriers.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, ErrorBag } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { organizationOf, type OrganizationRow } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { carrierStream, certificationFor, evolve, initialState, type CarrierEvent, type CarrierState } from './carrier.js'
import { checkCallbackUrls } from './callback-urls.js'
import { newCredentials } from './credentials.js'
import { requireCarriersEnabled } from './carriers-enabled.js'
import { nextServiceTypeIds } from './service-type-ids.js'
import { carrierView } from './queries.js'

export interface CreateCarrier {
  type: 'CreateCarrier'
  data: Body & {
    id: string
    organization_id: string
    key_id: string
    key_hash: string
    secret_id: string
    secret_encrypted: string
    service_type_ids: number[]
    now: Date
  }
}

export function decide(command: CreateCarrier, state: CarrierState): CarrierEvent[] {
  if (state.exists) throw new IllegalStateError('The carrier already exists.', 'carrier_exists')
  const d = command.data
  const at = d.now.toISOString()
  const types = d.service_types ?? []
  return [
    {
      type: 'CarrierCreated',
      data: {
        id: d.id, organization_id: d.organization_id, name: d.name.trim(), integration: d.integration, visibility: d.visibility,
        access_mode: d.access_mode ?? 'contract', notification_url: d.notification_url ?? null, quote_url: d.quote_url ?? null,
        quote_mode: d.quote_mode ?? 'tariff', certification_status: certificationFor(d.visibility), created_at: at,
      },
    },
    {
      type: 'CarrierCredentialsIssued',
      data: { key_id: d.key_id, key_hash: d.key_hash, secret_id: d.secret_id, secret_encrypted: d.secret_encrypted, issued_at: at, previous_expire_at: null },
    },
    ...types.map((t, i): CarrierEvent => ({ type: 'ServiceTypeAdded', data: { id: d.service_type_ids[i]!, code: t.code, name: t.name.trim(), added_at: at } })),
  ]
}

export const decider: Decider<CarrierState, CreateCarrier, CarrierEvent> = { decide, evolve, initialState }

export async function createCarrier(platform: Platform, org: OrganizationRow, body: Body, ctx: CommandContext) {
  const errors = new ErrorBag()
  await checkCallbackUrls(platform, body, errors)
  const codes = new Map<string, number>()
  ;(body.service_types ?? []).forEach((t, i) => {
    if (codes.has(t.code)) errors.add(`service_types.${i}.code`, `The code is repeated (service_types.${codes.get(t.code)}.code).`)
    codes.set(t.code, i)
  })
  errors.throwIfAny()
  const id = publicId('car')
  const creds = newCredentials(platform.secretsKey)
  await handleCommand(platform.commands, carrierStream(id), decider, {
    type: 'CreateCarrier',
    data: {
      ...body, id, organization_id: org.id, key_id: creds.keyId, key_hash: creds.keyHash, secret_id: creds.secretId,
      secret_encrypted: creds.secretEncrypted, service_type_ids: await nextServiceTypeIds(platform, body.service_types?.length ?? 0), now: ctx.now,
    },
  }, ctx)
  return { id, apiKey: creds.apiKey, hmacSecret: creds.hmacSecret, keyId: creds.keyId }
}

export const createCarrierRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/carriers', {
    schema: {
      tags: ['carrier hub'],
      summary: 'Create a carrier; its API key and HMAC secret are shown once',
      body: CreateCarrierBody,
      response: { 201: CarrierWithCredentials, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    requireCarriersEnabled(org)
    const { id, apiKey, hmacSecret, keyId } = await createCarrier(platform, org, req.body, commandContext(platform, req))
    return reply.code(201).send({ carrier: await carrierView(platform.rm, id), api_key: apiKey, hmac_secret: hmacSecret, key_id: keyId })
  })
}
