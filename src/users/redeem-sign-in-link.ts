import { DriverSession, RedeemSignInLinkBody } from '../../schemas/api/users.js'
import { errorResponses } from '../../schemas/api/common.js'
import { DomainError, IllegalStateError, UnauthorizedError } from '../shared/errors.js'
import { handleCommand } from '../shared/command-handler.js'
import { newAccessToken } from '../organizations/access-token.js'
import { addressRateLimit } from '../http/address-rate-limit.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireActive, userDeciderOf, userStream, type UserEvent, type UserState } from './user.js'
import { signInCodeHash } from './sign-in-code.js'

/** Tries of a code per client address a minute: a driver who mistypes twice is fine, a guesser is not. */
export const SIGN_IN_ATTEMPTS_PER_MINUTE = 10

export interface RedeemSignInLink {
  type: 'RedeemSignInLink'
  data: { link_id: string; code_hash: string; token_id: string; token_hash: string; now: Date }
}

/** The stream decides single use: of two phones opening one link at once, the second finds it spent. */
export function decide(command: RedeemSignInLink, state: UserState): UserEvent[] {
  const d = command.data
  requireActive(state)
  const link = state.signInLinks.get(d.link_id)
  if (!link || link.codeHash !== d.code_hash) throw new IllegalStateError('Unknown sign-in link.', 'sign_in_link_unknown')
  if (link.spent) throw new IllegalStateError(`The sign-in link was ${link.spent}.`, `sign_in_link_${link.spent}`)
  if (d.now.getTime() >= Date.parse(link.expiresAt)) throw new IllegalStateError('The sign-in link has expired.', 'sign_in_link_expired')
  if (state.role !== 'driver') throw new IllegalStateError('Sign-in links are for drivers.', 'not_a_driver')
  const at = d.now.toISOString()
  return [
    { type: 'UserSignInLinkRedeemed', data: { link_id: d.link_id, token_id: d.token_id, redeemed_at: at } },
    { type: 'UserTokenIssued', data: { token_id: d.token_id, token_hash: d.token_hash, issued_at: at } },
  ]
}

export const decider = userDeciderOf(decide)

/**
 * POST /driver/sign-in (no token: the code is the credential): the phone sends the code in the body,
 * never in a URL, and gets the driver's own access token. Unknown, used, revoked and expired codes
 * get the same 401, so a guesser learns nothing.
 */
export const redeemSignInLinkRoutes: RoutesPlugin = async (app, { platform }) => {
  const limit = addressRateLimit(platform, 'driver-sign-in', SIGN_IN_ATTEMPTS_PER_MINUTE)
  app.post('/driver/sign-in', {
    onRequest: limit,
    schema: { hide: true, body: RedeemSignInLinkBody, response: { 200: DriverSession, ...errorResponses } },
  }, async (req, reply) => {
    const codeHash = signInCodeHash(req.body.code)
    const invalid = new UnauthorizedError('This sign-in code is not valid: it may have been used, revoked or expired. Ask your dispatcher for a new one.')
    const row = await platform.rm.selectFrom('access_tokens as t')
      .innerJoin('users as u', 'u.id', 't.subject_id')
      .innerJoin('organizations as o', 'o.id', 'u.organization_id')
      .select(['t.token_id as link_id', 'u.id as user_id', 'u.name', 'o.name as organization_name', 'o.locale', 'o.timezone'])
      .where('t.token_hash', '=', codeHash).where('t.kind', '=', 'sign_in_link')
      .executeTakeFirst()
    if (!row) throw invalid
    const { token, tokenId, tokenHash } = newAccessToken()
    const ctx = { ...commandContext(platform, req), actor: { kind: 'user' as const, id: row.user_id } }
    try {
      await handleCommand(platform.commands, userStream(row.user_id), decider, {
        type: 'RedeemSignInLink', data: { link_id: row.link_id, code_hash: codeHash, token_id: tokenId, token_hash: tokenHash, now: ctx.now },
      }, ctx)
    } catch (err) {
      if (err instanceof DomainError) {
        req.log.info({ link_id: row.link_id, refused: err.code }, 'sign-in link refused')
        throw invalid
      }
      throw err
    }
    return reply.header('cache-control', 'no-store').send({
      access_token: token,
      user: { id: row.user_id, name: row.name },
      organization: { name: row.organization_name, locale: row.locale, timezone: row.timezone },
    })
  })
}
