import { Type, type Static } from 'typebox'

// Event payloads of the user stream `user-<usr_id>`, version 1 (DESIGN §1: upcast on read, never rewritten).

export const UserRole = Type.Union([Type.Literal('dispatcher'), Type.Literal('driver')])

export const UserCreated = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  phone: Type.Union([Type.String(), Type.Null()]),
  role: UserRole,
  created_at: Type.String(),
})
export type UserCreated = Static<typeof UserCreated>

/** Only the fields the update changed. */
export const UserUpdated = Type.Object({
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
  phone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  role: Type.Optional(UserRole),
  updated_at: Type.String(),
})
export type UserUpdated = Static<typeof UserUpdated>

/** A user's access token; only its hash is kept (DESIGN §3.1). */
export const UserTokenIssued = Type.Object({ token_id: Type.String(), token_hash: Type.String(), issued_at: Type.String() })
export type UserTokenIssued = Static<typeof UserTokenIssued>

/** Revokes every token of the user at once. */
export const UserDeactivated = Type.Object({ deactivated_at: Type.String() })
export type UserDeactivated = Static<typeof UserDeactivated>

/**
 * A one-time sign-in link (or its short code) for a driver's phone (issue 38): only the code's hash
 * is kept, as a token's is; it opens once, before `expires_at`, unless revoked.
 */
export const UserSignInLinkCreated = Type.Object({ link_id: Type.String(), code_hash: Type.String(), expires_at: Type.String(), created_at: Type.String() })
export type UserSignInLinkCreated = Static<typeof UserSignInLinkCreated>

/** The link was opened: the phone got the access token `token_id` (its UserTokenIssued follows in the same append). */
export const UserSignInLinkRedeemed = Type.Object({ link_id: Type.String(), token_id: Type.String(), redeemed_at: Type.String() })
export type UserSignInLinkRedeemed = Static<typeof UserSignInLinkRedeemed>

/** The dispatcher took the link back before it was used. */
export const UserSignInLinkRevoked = Type.Object({ link_id: Type.String(), revoked_at: Type.String() })
export type UserSignInLinkRevoked = Static<typeof UserSignInLinkRevoked>

/** The events of a `user-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const UserEvents = {
  UserCreated, UserUpdated, UserTokenIssued, UserDeactivated, UserSignInLinkCreated, UserSignInLinkRedeemed, UserSignInLinkRevoked,
} as const
