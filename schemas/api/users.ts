import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, Page, pageQuery } from './common.js'

const Role = Type.Union([Type.Literal('dispatcher'), Type.Literal('driver')], { title: 'UserRole' })
const Name = Type.String({ minLength: 1, maxLength: 100 })
const Email = Type.String({ format: 'email', maxLength: 190 })
const Phone = Type.String({ minLength: 1, maxLength: 30, description: 'E.164, or national for the organization\'s market' })

export const User = Type.Object({
  id: Type.String({ description: 'public id, prefix usr_' }),
  name: Type.String(),
  email: Type.String(),
  phone: Nullable(Type.String()),
  role: Role,
  status: Type.Union([Type.Literal('active'), Type.Literal('deactivated')]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  deactivated_at: Nullable(Type.String({ format: 'date-time' })),
}, { title: 'User' })
export type User = Static<typeof User>

export const CreateUserBody = Type.Object({
  name: Name,
  email: Email,
  phone: Type.Optional(Nullable(Phone)),
  role: Role,
}, { title: 'CreateUserRequest', additionalProperties: false })
export type CreateUserBody = Static<typeof CreateUserBody>

export const UpdateUserBody = Type.Object({
  name: Type.Optional(Name),
  email: Type.Optional(Email),
  phone: Type.Optional(Nullable(Phone)),
  role: Type.Optional(Role),
}, { title: 'UpdateUserRequest', additionalProperties: false, minProperties: 1 })
export type UpdateUserBody = Static<typeof UpdateUserBody>

export const UserIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const UsersQuery = Type.Object({
  role: Type.Optional(Role),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('deactivated')])),
  ...pageQuery(),
  cursor: ListingCursor,
}, { additionalProperties: false })

export const CreatedUser = Type.Object({ success: Type.Boolean(), user: User, access_token: Type.String({ description: 'shown once' }) }, { title: 'CreatedUser' })
export const UserEnvelope = Type.Object({ success: Type.Boolean(), user: User }, { title: 'UserEnvelope' })
export const UsersPage = Page(User, 'UsersPage')

// Sign-in links for a driver's phone (issue 38; docs/decisions.md "Driver sign-in links").
export const SIGN_IN_LINK_DEFAULT_MINUTES = 15
export const SIGN_IN_LINK_MAX_MINUTES = 60

export const CreateSignInLinkBody = Type.Union([Type.Object({
  ttl_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: SIGN_IN_LINK_MAX_MINUTES, description: `minutes the link opens for: default ${SIGN_IN_LINK_DEFAULT_MINUTES}, at most ${SIGN_IN_LINK_MAX_MINUTES}` })),
}, { additionalProperties: false }), Type.Null()], { title: 'CreateSignInLinkRequest' })

export const SignInLinkParams = Type.Object({ id: Type.String({ maxLength: 64 }), link_id: Type.String({ maxLength: 64 }) })

export const SignInLink = Type.Object({
  id: Type.String({ description: 'public id, prefix sil_; revoke with DELETE …/sign-in-links/{id}' }),
  url: Type.String({ description: 'opens the driver\'s app and signs the phone in; the code is in the fragment (#code=…), which no server, log or Referer sees' }),
  code: Type.String({ description: 'the same code to type in the app instead (case and dashes do not matter)' }),
  expires_at: Type.String({ format: 'date-time' }),
}, { title: 'SignInLink' })
export const SignInLinkEnvelope = Type.Object({ success: Type.Boolean(), sign_in_link: SignInLink }, { title: 'SignInLinkEnvelope' })

export const RedeemSignInLinkBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64, description: 'the code of the link (#code=…) or as typed' }),
}, { title: 'RedeemSignInLinkRequest', additionalProperties: false })

/** What the phone keeps: the driver's own access token, and who and which organization it is. */
export const DriverSession = Type.Object({
  access_token: Type.String(),
  user: Type.Object({ id: Type.String(), name: Type.String() }),
  organization: Type.Object({ name: Type.String(), locale: Type.String(), timezone: Type.String() }),
}, { title: 'DriverSession' })

export const RevokedSignInLink = Type.Object({
  success: Type.Boolean(),
  sign_in_link: Type.Object({
    id: Type.String(),
    state: Type.Union([Type.Literal('revoked'), Type.Literal('redeemed')], { description: '`redeemed`: it was used before the revocation (deactivate the user to end that session)' }),
  }),
}, { title: 'RevokedSignInLink' })
