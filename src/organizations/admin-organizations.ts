import { AccessTokenResponse, CreateContractBody, OrgIdParams, TokenIdParams, OrganizationEnvelope, RevokedToken, ContractEnvelope } from '../../schemas/api/organizations.js'
import { errorResponses, ErrorResponse } from '../../schemas/api/common.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, ErrorBag, NotFoundError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { evolve, initialState, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { newAccessToken } from './create-organization.js'
import { findOrganization, toOrganization } from './queries.js'

/** Token issue/revoke, suspension and contracts: the admin's commands on an organization stream. */
export type AdminCommand =
  | { type: 'IssueToken'; data: { token_id: string; token_hash: string; now: Date } }
  | { type: 'RevokeToken'; data: { token_id: string; now: Date } }
  | { type: 'Suspend'; data: { now: Date } }
  | { type: 'Unsuspend'; data: { now: Date } }
  | { type: 'SignContract'; data: { contract_id: string; carrier_id: string; shipper_id: string; now: Date } }

export function decide(command: AdminCommand, state: OrganizationState): OrganizationEvent[] {
  if (!state.exists) throw new NotFoundError('Organization')
  const at = command.data.now.toISOString()
  switch (command.type) {
    case 'IssueToken':
      return [{ type: 'TokenIssued', data: { token_id: command.data.token_id, token_hash: command.data.token_hash, issued_at: at } }]
    case 'RevokeToken': {
      const t = state.tokens.get(command.data.token_id)
      if (!t) throw new NotFoundError('Token')
      return t.revoked ? [] : [{ type: 'TokenRevoked', data: { token_id: command.data.token_id, revoked_at: at } }]
    }
    case 'Suspend':
      return state.suspended ? [] : [{ type: 'OrganizationSuspended', data: { suspended_at: at } }]
    case 'Unsuspend':
      return state.suspended ? [{ type: 'OrganizationUnsuspended', data: { unsuspended_at: at } }] : []
    case 'SignContract':
      if (state.carriersUnderContract.has(command.data.carrier_id)) {
        throw new IllegalStateError('These organizations already have an active contract.', 'contract_exists')
      }
      return [{ type: 'ContractSigned', data: { contract_id: command.data.contract_id, carrier_id: command.data.carrier_id, shipper_id: command.data.shipper_id, signed_at: at } }]
  }
}

export const decider: Decider<OrganizationState, AdminCommand, OrganizationEvent> = { decide, evolve, initialState }

export const adminOrganizationRoutes: RoutesPlugin = async (app, { platform }) => {
  const orgResponse = { 200: OrganizationEnvelope, 404: ErrorResponse, ...errorResponses }

  app.post('/organizations/:org_id/tokens', {
    schema: { tags: ['admin'], summary: 'Issue another access token (shown once)', params: OrgIdParams, response: { 201: AccessTokenResponse, 404: ErrorResponse, ...errorResponses } },
  }, async (req, reply) => {
    const { org_id } = req.params
    const { token, tokenId, tokenHash } = newAccessToken()
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(org_id), decider, { type: 'IssueToken', data: { token_id: tokenId, token_hash: tokenHash, now: ctx.now } }, ctx)
    return reply.code(201).send({ access_token: token, token_id: tokenId })
  })

  app.delete('/tokens/:token_id', {
    schema: { tags: ['admin'], summary: 'Revoke a token', params: TokenIdParams, response: { 200: RevokedToken, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const { token_id } = req.params
    const row = await platform.rm.selectFrom('access_tokens').select(['subject_id']).where('token_id', '=', token_id).where('kind', '=', 'organization').executeTakeFirst()
    if (!row) throw new NotFoundError('Token')
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(row.subject_id), decider, { type: 'RevokeToken', data: { token_id, now: ctx.now } }, ctx)
    return { success: true }
  })

  for (const action of ['suspend', 'unsuspend'] as const) {
    app.post(`/organizations/:org_id/${action}`, {
      schema: { tags: ['admin'], summary: `${action[0]!.toUpperCase()}${action.slice(1)} an organization`, params: OrgIdParams, response: orgResponse },
    }, async (req) => {
      const { org_id } = req.params
      const ctx = commandContext(platform, req)
      await handleCommand(platform.commands, streamOf(org_id), decider, { type: action === 'suspend' ? 'Suspend' : 'Unsuspend', data: { now: ctx.now } }, ctx)
      return { organization: toOrganization((await findOrganization(platform, org_id))!) }
    })
  }

  app.post('/contracts', {
    schema: { tags: ['admin'], summary: 'Sign a contract between a carrier and a shipper organization', body: CreateContractBody, response: { 201: ContractEnvelope, ...errorResponses } },
  }, async (req, reply) => {
    const { carrier_id, shipper_id } = req.body
    const [carrier, shipper] = await Promise.all([findOrganization(platform, carrier_id), findOrganization(platform, shipper_id)])
    const errors = new ErrorBag()
    if (!carrier) errors.add('carrier_id', 'The selected carrier_id is invalid.')
    else if (!(carrier.roles as unknown as string[]).includes('carrier')) errors.add('carrier_id', 'The organization is not a carrier.')
    if (!shipper) errors.add('shipper_id', 'The selected shipper_id is invalid.')
    else if (!(shipper.roles as unknown as string[]).includes('shipper')) errors.add('shipper_id', 'The organization is not a shipper.')
    if (carrier_id === shipper_id) errors.add('shipper_id', 'The shipper must be another organization than the carrier.')
    errors.throwIfAny()
    const contract_id = publicId('ctr')
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(shipper_id), decider, { type: 'SignContract', data: { contract_id, carrier_id, shipper_id, now: ctx.now } }, ctx)
    return reply.code(201).send({ contract: { id: contract_id, carrier_id, shipper_id, status: 'active', signed_at: ctx.now.toISOString() } })
  })
}
