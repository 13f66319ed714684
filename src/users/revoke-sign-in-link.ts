import { RevokedSignInLink, SignInLinkParams } from '../../schemas/api/users.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireUser, userDeciderOf, userStream, type UserEvent, type UserState } from './user.js'
import { findUser } from './queries.js'

export interface RevokeSignInLink { type: 'RevokeSignInLink'; data: { organization_id: string; link_id: string; now: Date } }

/** A link already used or revoked stays as it is (the token it gave is revoked by deactivating the user). */
export function decide(command: RevokeSignInLink, state: UserState): UserEvent[] {
  const d = command.data
  requireUser(state, d.organization_id)
  const link = state.signInLinks.get(d.link_id)
  if (!link) throw new NotFoundError('Sign-in link')
  if (link.spent) return []
  return [{ type: 'UserSignInLinkRevoked', data: { link_id: d.link_id, revoked_at: d.now.toISOString() } }]
}

export const decider = userDeciderOf(decide)

export const revokeSignInLinkRoutes: RoutesPlugin = async (app, { platform }) => {
  app.delete('/users/:id/sign-in-links/:link_id', {
    schema: {
      tags: ['users'], summary: 'Revoke a sign-in link before it is used (a used one stays used: its state says which)',
      params: SignInLinkParams, response: { 200: RevokedSignInLink, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id, link_id } = req.params
    if (!(await findUser(platform.rm, org.id, id))) throw new NotFoundError('User')
    const ctx = commandContext(platform, req)
    const { state } = await handleCommand(platform.commands, userStream(id), decider, { type: 'RevokeSignInLink', data: { organization_id: org.id, link_id, now: ctx.now } }, ctx)
    return { success: true, sign_in_link: { id: link_id, state: state.signInLinks.get(link_id)?.spent ?? 'revoked' } }
  })
}
