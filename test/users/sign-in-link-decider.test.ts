import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as createLink } from '../../src/users/create-sign-in-link.js'
import { decider as redeemLink, type RedeemSignInLink } from '../../src/users/redeem-sign-in-link.js'
import { decider as revokeLink } from '../../src/users/revoke-sign-in-link.js'
import type { UserEvent } from '../../src/users/user.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'

// Sign-in links (issue 38), given events / when command / then events (or error), no database.

const now = new Date('2026-11-29T09:00:00Z')
const at = now.toISOString()
const later = (ms: number) => new Date(now.getTime() + ms)
const created = (role: 'driver' | 'dispatcher'): UserEvent =>
  ({ type: 'UserCreated', data: { id: 'usr_1', organization_id: 'org_1', name: 'Dana', email: 'd@example.com', phone: null, role, created_at: at } })
const linked: UserEvent = { type: 'UserSignInLinkCreated', data: { link_id: 'sil_1', code_hash: 'c1', expires_at: later(900_000).toISOString(), created_at: at } }
const redeemed: UserEvent = { type: 'UserSignInLinkRedeemed', data: { link_id: 'sil_1', token_id: 'tok_9', redeemed_at: at } }
const revoked: UserEvent = { type: 'UserSignInLinkRevoked', data: { link_id: 'sil_1', revoked_at: at } }
const redeem = (over: Partial<RedeemSignInLink['data']> = {}): RedeemSignInLink =>
  ({ type: 'RedeemSignInLink', data: { link_id: 'sil_1', code_hash: 'c1', token_id: 'tok_9', token_hash: 'h9', now, ...over } })

t.test('create: for an active driver of the organization only', async (t) => {
  const spec = DeciderSpecification.for(createLink)
  const cmd = { type: 'CreateSignInLink' as const, data: { organization_id: 'org_1', link_id: 'sil_1', code_hash: 'c1', expires_at: later(900_000), now } }
  spec.given([created('driver')]).when(cmd).then(t, [linked])
  spec.given([created('dispatcher')]).when(cmd).thenThrows(t, IllegalStateError, { code: 'not_a_driver' })
  spec.given([created('driver'), { type: 'UserDeactivated', data: { deactivated_at: at } }]).when(cmd).thenThrows(t, IllegalStateError, { code: 'user_deactivated' })
  spec.given([created('driver')]).when({ ...cmd, data: { ...cmd.data, organization_id: 'org_2' } }).thenThrows(t, NotFoundError)
})

t.test('redeem: once, with the right code, before it expires; a token is issued with it', async (t) => {
  const spec = DeciderSpecification.for(redeemLink)
  spec.given([created('driver'), linked]).when(redeem()).then(t, [redeemed, { type: 'UserTokenIssued', data: { token_id: 'tok_9', token_hash: 'h9', issued_at: at } }])
  spec.given([created('driver'), linked, redeemed]).when(redeem()).thenThrows(t, IllegalStateError, { code: 'sign_in_link_redeemed' })
  spec.given([created('driver'), linked, revoked]).when(redeem()).thenThrows(t, IllegalStateError, { code: 'sign_in_link_revoked' })
  spec.given([created('driver'), linked]).when(redeem({ code_hash: 'other' })).thenThrows(t, IllegalStateError, { code: 'sign_in_link_unknown' })
  spec.given([created('driver'), linked]).when(redeem({ now: later(900_000) })).thenThrows(t, IllegalStateError, { code: 'sign_in_link_expired' })
  spec.given([created('driver'), linked, { type: 'UserDeactivated', data: { deactivated_at: at } }]).when(redeem()).thenThrows(t, IllegalStateError, { code: 'user_deactivated' })
})

t.test('revoke: an open link; a spent one stays as it is; an unknown one is 404', async (t) => {
  const spec = DeciderSpecification.for(revokeLink)
  const cmd = { type: 'RevokeSignInLink' as const, data: { organization_id: 'org_1', link_id: 'sil_1', now } }
  spec.given([created('driver'), linked]).when(cmd).then(t, [revoked])
  spec.given([created('driver'), linked, redeemed]).when(cmd).thenNothingHappened(t)
  spec.given([created('driver')]).when(cmd).thenThrows(t, NotFoundError)
})
