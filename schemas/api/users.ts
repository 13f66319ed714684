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
