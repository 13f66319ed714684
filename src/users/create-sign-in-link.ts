import { CreateSignInLinkBody, SIGN_IN_LINK_DEFAULT_MINUTES, SignInLinkEnvelope, UserIdParams } from '../../schemas/api/users.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import { publicId } from '../shared/ids.js'
import { handleCommand } from '../shared/command-handler.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { HttpError } from '../http/http-error.js'
import { publicUrl } from '../http/public-url.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireActive, requireUser, userDeciderOf, userStream, type UserEvent, type UserState } from './user.js'
import { findUser } from './queries.js'
import { newSignInCode } from './sign-in-code.js'

/** Links one driver may be given per minute: enough for a dispatcher who retries, too few to flood a phone. */
export const SIGN_IN_LINKS_PER_MINUTE = 5

export interface CreateSignInLink { type: 'CreateSignInLink'; data: { organization_id: string; link_id: string; code_hash: string; expires_at: Date; now: Date } }

/** Only an active driver is given a link: a dispatcher's work is not on a phone in a van. */
export function decide(command: CreateSignInLink, state: UserState): UserEvent[] {
  const d = command.data
  requireUser(state, d.organization_id)
  requireActive(state)
  if (state.role !== 'driver') throw new IllegalStateError('Sign-in links are for drivers.', 'not_a_driver')
  return [{ type: 'UserSignInLinkCreated', data: { link_id: d.link_id, code_hash: d.code_hash, expires_at: d.expires_at.toISOString(), created_at: d.now.toISOString() } }]
}

export const decider = userDeciderOf(decide)

class SignInLinksRateLimited extends HttpError {
  constructor(readonly retryAfter: number) {
    super(409, 'rate_limited', `At most ${SIGN_IN_LINKS_PER_MINUTE} sign-in links per driver a minute; retry after the time in Retry-After.`)
  }
}

/** POST /users/{id}/sign-in-links (the organization, a dispatcher): a one-time link and code for the driver's phone. */
export const createSignInLinkRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/users/:id/sign-in-links', {
    schema: {
      tags: ['users'], summary: 'A one-time sign-in link and short code for a driver\'s phone (shown once; minutes of validity)',
      params: UserIdParams, body: CreateSignInLinkBody, response: { 201: SignInLinkEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const { id } = req.params
    if (!(await findUser(platform.rm, org.id, id))) throw new NotFoundError('User')
    const ctx = commandContext(platform, req)
    const taken = await platform.rateLimiter.take(`sign-in-links:${id}`, SIGN_IN_LINKS_PER_MINUTE, ctx.now)
    if (!taken.allowed) throw new SignInLinksRateLimited(taken.retryAfterSeconds)
    const linkId = publicId('sil')
    const { code, codeHash } = newSignInCode()
    const expiresAt = new Date(ctx.now.getTime() + (req.body?.ttl_minutes ?? SIGN_IN_LINK_DEFAULT_MINUTES) * 60_000)
    expiresAt.setUTCMilliseconds(0)
    await handleCommand(platform.commands, userStream(id), decider, {
      type: 'CreateSignInLink', data: { organization_id: org.id, link_id: linkId, code_hash: codeHash, expires_at: expiresAt, now: ctx.now },
    }, ctx)
    reply.header('cache-control', 'no-store')
    return reply.code(201).send({
      success: true,
      sign_in_link: { id: linkId, url: publicUrl(req, `/driver#code=${code}`), code, expires_at: expiresAt.toISOString() },
    })
  })
}
