import { AccessTokenResponse, OrgIdParams } from '../../schemas/api/organizations.js'
import { errorResponses, ErrorResponse } from '../../schemas/api/common.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { organizationDeciderOf, requireOrganization, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'
import { newAccessToken } from './access-token.js'

/** The admin issues another access token of an organization (its hash only is recorded). */
export interface IssueToken { type: 'IssueToken'; data: { token_id: string; token_hash: string; now: Date } }

export function decide(command: IssueToken, state: OrganizationState): OrganizationEvent[] {
  requireOrganization(state)
  return [{ type: 'TokenIssued', data: { token_id: command.data.token_id, token_hash: command.data.token_hash, issued_at: command.data.now.toISOString() } }]
}

export const decider = organizationDeciderOf(decide)

export const issueTokenRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/organizations/:org_id/tokens', {
    schema: { tags: ['admin'], summary: 'Issue another access token (shown once)', params: OrgIdParams, response: { 201: AccessTokenResponse, 404: ErrorResponse, ...errorResponses } },
  }, async (req, reply) => {
    const { org_id } = req.params
    const { token, tokenId, tokenHash } = newAccessToken()
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, streamOf(org_id), decider, { type: 'IssueToken', data: { token_id: tokenId, token_hash: tokenHash, now: ctx.now } }, ctx)
    return reply.code(201).send({ access_token: token, token_id: tokenId })
  })
}
