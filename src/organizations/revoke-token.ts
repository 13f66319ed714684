import { RevokedToken, TokenIdParams } from '../../schemas/api/organizations.js'
import { errorResponses, ErrorResponse } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { organizationDeciderOf, requireOrganization, streamOf, type OrganizationEvent, type OrganizationState } from './organization.js'

/** The admin revokes an access token; a revoked token is not revoked again. */
export interface RevokeToken { type: 'RevokeToken'; data: { token_id: string; now: Date } }

export function decide(command: RevokeToken, state: OrganizationState): OrganizationEvent[] {
  requireOrganization(state)
  const t = state.tokens.get(command.data.token_id)
  if (!t) throw new NotFoundError('Token')
  return t.revoked ? [] : [{ type: 'TokenRevoked', data: { token_id: command.data.token_id, revoked_at: command.data.now.toISOString() } }]
}

export const decider = organizationDeciderOf(decide)

export const revokeTokenRoutes: RoutesPlugin = async (app, { platform }) => {
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
}
