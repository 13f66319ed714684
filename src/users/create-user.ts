import { CreatedUser, CreateUserBody, type CreateUserBody as Body } from '../../schemas/api/users.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { handleCommand } from '../shared/command-handler.js'
import { newAccessToken } from '../organizations/access-token.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { userDeciderOf, userStream, type UserEvent, type UserState } from './user.js'
import { findUser, toUser } from './queries.js'
import { checkUserFields } from './user-fields.js'

export interface CreateUser {
  type: 'CreateUser'
  data: { id: string; organization_id: string; name: string; email: string; phone: string | null; role: Body['role']; token_id: string; token_hash: string; now: Date }
}

export function decide(command: CreateUser, state: UserState): UserEvent[] {
  if (state.exists) throw new IllegalStateError('The user already exists.', 'user_exists')
  const d = command.data
  const at = d.now.toISOString()
  return [
    { type: 'UserCreated', data: { id: d.id, organization_id: d.organization_id, name: d.name.trim(), email: d.email.trim(), phone: d.phone, role: d.role, created_at: at } },
    { type: 'UserTokenIssued', data: { token_id: d.token_id, token_hash: d.token_hash, issued_at: at } },
  ]
}

export const decider = userDeciderOf(decide)

export const createUserRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/users', {
    schema: {
      tags: ['users'], summary: 'Create a dispatcher or a driver; its access token is shown once',
      body: CreateUserBody, response: { 201: CreatedUser, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const errors = new ErrorBag()
    const phone = await checkUserFields(platform, org.id, req.body, errors)
    errors.throwIfAny()
    const id = publicId('usr')
    const { token, tokenId, tokenHash } = newAccessToken()
    const ctx = commandContext(platform, req)
    await handleCommand(platform.commands, userStream(id), decider, {
      type: 'CreateUser',
      data: { id, organization_id: org.id, name: req.body.name, email: req.body.email, phone: phone ?? null, role: req.body.role, token_id: tokenId, token_hash: tokenHash, now: ctx.now },
    }, ctx)
    const row = await findUser(platform.rm, org.id, id)
    return reply.code(201).send({ success: true, user: toUser(row!), access_token: token })
  })
}
