import { Type, type Static } from 'typebox'

// Event payloads of the organization and place streams, version 1 (DESIGN §1: upcast on read, never rewritten).

export const OrganizationCreated = Type.Object({
  id: Type.String(),
  internal_id: Type.Integer(),
  name: Type.String(),
  subdomain: Type.String(),
  roles: Type.Array(Type.Union([Type.Literal('carrier'), Type.Literal('shipper')])),
  currency: Type.String(),
  locale: Type.String(),
  timezone: Type.String(),
  market: Type.Union([Type.String(), Type.Null()]),
  carriers_enabled: Type.Boolean(),
  created_at: Type.String(),
})
export type OrganizationCreated = Static<typeof OrganizationCreated>

export const TokenIssued = Type.Object({
  token_id: Type.String(),
  token_hash: Type.String(),
  issued_at: Type.String(),
})
export type TokenIssued = Static<typeof TokenIssued>

export const TokenRevoked = Type.Object({ token_id: Type.String(), revoked_at: Type.String() })
export type TokenRevoked = Static<typeof TokenRevoked>

export const OrganizationSuspended = Type.Object({ suspended_at: Type.String() })
export type OrganizationSuspended = Static<typeof OrganizationSuspended>

export const OrganizationUnsuspended = Type.Object({ unsuspended_at: Type.String() })
export type OrganizationUnsuspended = Static<typeof OrganizationUnsuspended>

export const ContractSigned = Type.Object({
  contract_id: Type.String(),
  carrier_id: Type.String(),
  shipper_id: Type.String(),
  signed_at: Type.String(),
})
export type ContractSigned = Static<typeof ContractSigned>

export const PlaceAdded = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  org_internal_id: Type.Integer(),
  name: Type.String(),
  street: Type.Union([Type.String(), Type.Null()]),
  street_number: Type.Union([Type.String(), Type.Null()]),
  floor: Type.Union([Type.String(), Type.Null()]),
  apartment: Type.Union([Type.String(), Type.Null()]),
  reference: Type.Union([Type.String(), Type.Null()]),
  phone_raw: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  zipcode: Type.Union([Type.String(), Type.Null()]),
  city: Type.Object({ id: Type.Integer(), name: Type.String() }),
  state: Type.Union([Type.Object({ id: Type.Integer(), code: Type.String(), name: Type.String() }), Type.Null()]),
  country: Type.Object({ id: Type.Integer(), code: Type.String(), name: Type.String() }),
  geo_latitude: Type.Union([Type.Number(), Type.Null()]),
  geo_longitude: Type.Union([Type.Number(), Type.Null()]),
  created_at: Type.String(),
})
export type PlaceAdded = Static<typeof PlaceAdded>

export const OperationalAddressSet = Type.Object({ place_id: Type.String() })
export type OperationalAddressSet = Static<typeof OperationalAddressSet>

/**
 * The organization's display settings changed (issue 37): only the fields named change. `time_zone`
 * null goes back to the default from the organization's country.
 */
export const OrganizationSettingsChanged = Type.Object({
  time_zone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  delivery_attempt_messages: Type.Optional(Type.Record(Type.String(), Type.String())),
  public_proof_photos: Type.Optional(Type.Boolean()),
  changed_at: Type.String(),
})
export type OrganizationSettingsChanged = Static<typeof OrganizationSettingsChanged>

/** The events of an `organization-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const OrganizationEvents = {
  OrganizationCreated, TokenIssued, TokenRevoked, OrganizationSuspended, OrganizationUnsuspended, ContractSigned, OperationalAddressSet,
  OrganizationSettingsChanged,
} as const

/** The event of a `place-<id>` stream. */
export const PlaceEvents = { PlaceAdded } as const
