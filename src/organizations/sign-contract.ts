import { ContractEnvelope, CreateContractBody } from '../../schemas/api/organizations.js'
import { errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError, ErrorBag } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { organizationDeciderOf, requireOrganization, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { findOrganization } from './queries.js'
import { json } from '../shared/rows.js'

/** The admin signs a contract between a carrier and a shipper; recorded on the shipper's stream. */
export interface SignContract { type: 'SignContract'; data: { contract_id: string; carrier_id: string; shipper_id: string; now: Date } }

/** One active contract per carrier and shipper (409 `contract_exists`). */
export function decide(command: SignContract, state: OrganizationState): OrganizationEvent[] {
  requireOrganization(state)
  if (state.carriersUnderContract.has(command.data.carrier_id)) {
    throw new IllegalStateError('These organizations already have an active contract.', 'contract_exists')
  }
  const { contract_id, carrier_id, shipper_id } = command.data
  return [{ type: 'ContractSigned', data: { contract_id, carrier_id, shipper_id, signed_at: command.data.now.toISOString() } }]
}

export const decider = organizationDeciderOf(decide)

export const signContractRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/contracts', {
    schema: { tags: ['admin'], summary: 'Sign a contract between a carrier and a shipper organization', body: CreateContractBody, response: { 201: ContractEnvelope, ...errorResponses } },
  }, async (req, reply) => {
    const { carrier_id, shipper_id } = req.body
    const [carrier, shipper] = await Promise.all([findOrganization(platform.rm, carrier_id), findOrganization(platform.rm, shipper_id)])
    const errors = new ErrorBag()
    if (!carrier) errors.add('carrier_id', 'The selected carrier_id is invalid.')
    else if (!json<string[]>(carrier.roles).includes('carrier')) errors.add('carrier_id', 'The organization is not a carrier.')
    if (!shipper) errors.add('shipper_id', 'The selected shipper_id is invalid.')
    else if (!json<string[]>(shipper.roles).includes('shipper')) errors.add('shipper_id', 'The organization is not a shipper.')
    if (carrier_id === shipper_id) errors.add('shipper_id', 'The shipper must be another organization than the carrier.')
    errors.throwIfAny()
    const contract_id = publicId('ctr')
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(shipper_id), decider, { type: 'SignContract', data: { contract_id, carrier_id, shipper_id, now: ctx.now } }, ctx)
    return reply.code(201).send({ contract: { id: contract_id, carrier_id, shipper_id, status: 'active', signed_at: ctx.now.toISOString() } })
  })
}
