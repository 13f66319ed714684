import { UserEnvelope, UserIdParams } from '../../schemas/api/users.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireUser, userDeciderOf, userStream, type UserEvent, type UserState } from './user.js'
import { findUser, toUser } from './queries.js'

export interface DeactivateUser { type: 'DeactivateUser'; data: { organization_id: string; now: Date } }

/** Deactivation revokes the user's tokens at once; deactivating twice changes nothing. */
export function decide(command: DeactivateUser, state: UserState): UserEvent[] {
  requireUser(state, command.data.organization_id)
  if (!state.active) return []
  return [{ type: 'UserDeactivated', data: { deactivated_at: command.data.now.toISOString() } }]
}

export const decider = userDeciderOf(decide)

export const deactivateUserRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/users/:id/deactivate', {
    schema: {
      tags: ['users'], summary: 'Deactivate a user: its token stops working at once',
      params: UserIdParams, response: { 200: UserEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    if (!(await findUser(platform.rm, org.id, id))) throw new NotFoundError('User')
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, userStream(id), decider, { type: 'DeactivateUser', data: { organization_id: org.id, now: ctx.now } }, ctx)
    return { success: true, user: toUser((await findUser(platform.rm, org.id, id))!) }
  })
}
