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

/** The events of a `user-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const UserEvents = { UserCreated, UserUpdated, UserTokenIssued, UserDeactivated } as const
