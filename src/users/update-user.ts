import { UpdateUserBody, UserEnvelope, UserIdParams, type UpdateUserBody as Body } from '../../schemas/api/users.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, NotFoundError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireActive, requireUser, userDeciderOf, userStream, type UserEvent, type UserState } from './user.js'
import { checkUserFields } from './user-fields.js'
import { findUser, toUser } from './queries.js'

export interface UpdateUser {
  type: 'UpdateUser'
  data: { organization_id: string; changes: Omit<Body, 'phone'> & { phone?: string | null }; now: Date }
}

export function decide(command: UpdateUser, state: UserState): UserEvent[] {
  requireUser(state, command.data.organization_id)
  requireActive(state)
  const { name, email, ...rest } = command.data.changes
  const changes = { ...rest, ...(name !== undefined ? { name: name.trim() } : {}), ...(email !== undefined ? { email: email.trim() } : {}) }
  if (Object.keys(changes).length === 0) return []
  return [{ type: 'UserUpdated', data: { ...changes, updated_at: command.data.now.toISOString() } }]
}

export const decider = userDeciderOf(decide)

export const updateUserRoutes: RoutesPlugin = async (app, { platform }) => {
  app.patch('/users/:id', {
    schema: {
      tags: ['users'], summary: 'Change a user\'s name, email, phone or role',
      params: UserIdParams, body: UpdateUserBody, response: { 200: UserEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    if (!(await findUser(platform.rm, org.id, id))) throw new NotFoundError('User')
    const errors = new ErrorBag()
    const phone = await checkUserFields(platform, org.id, req.body, errors, id)
    errors.throwIfAny()
    const { phone: _given, ...rest } = req.body
    await handleCommand(platform.commands, userStream(id), decider, {
      type: 'UpdateUser', data: { organization_id: org.id, changes: { ...rest, ...(phone !== undefined ? { phone } : {}) }, now: platform.clock() },
    }, commandContext(platform, req))
    return { success: true, user: toUser((await findUser(platform.rm, org.id, id))!) }
  })
}
