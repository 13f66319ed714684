import { Type, type Static } from 'typebox'

// Event payloads of the carrier stream (`carrier-<car_id>`), version 1.

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()])

export const CarrierCreated = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  integration: Type.Union([Type.Literal('custom'), Type.Literal('service_routes')]),
  visibility: Type.Union([Type.Literal('private'), Type.Literal('public')]),
  access_mode: Type.Union([Type.Literal('open'), Type.Literal('contract')]),
  notification_url: Nullable(Type.String()),
  quote_url: Nullable(Type.String()),
  quote_mode: Type.Union([Type.Literal('tariff'), Type.Literal('api')]),
  /** `pending` for a public carrier, `not_required` for a private one. */
  certification_status: Type.String(),
  created_at: Type.String(),
})
export type CarrierCreated = Static<typeof CarrierCreated>

/** Only the fields that changed. */
export const CarrierUpdated = Type.Object({
  name: Type.Optional(Type.String()),
  visibility: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('public')])),
  access_mode: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('contract')])),
  notification_url: Type.Optional(Nullable(Type.String())),
  quote_url: Type.Optional(Nullable(Type.String())),
  quote_mode: Type.Optional(Type.Union([Type.Literal('tariff'), Type.Literal('api')])),
  certification_status: Type.Optional(Type.String()),
  updated_at: Type.String(),
})
export type CarrierUpdated = Static<typeof CarrierUpdated>

/**
 * An API key (stored as its SHA-256) and an HMAC secret (AES-256-GCM under SECRETS_KEY) issued
 * together. `previous_expire_at` is set on a rotation: every key and secret valid until then
 * stays valid until that instant (24 h overlap).
 */
export const CarrierCredentialsIssued = Type.Object({
  key_id: Type.String(),
  key_hash: Type.String(),
  secret_id: Type.String(),
  secret_encrypted: Type.String(),
  issued_at: Type.String(),
  previous_expire_at: Nullable(Type.String()),
})
export type CarrierCredentialsIssued = Static<typeof CarrierCredentialsIssued>

export const CarrierCertificationDecided = Type.Object({
  status: Type.Union([Type.Literal('certified'), Type.Literal('rejected')]),
  decided_at: Type.String(),
})
export type CarrierCertificationDecided = Static<typeof CarrierCertificationDecided>

export const ServiceTypeAdded = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  name: Type.String(),
  added_at: Type.String(),
})
export type ServiceTypeAdded = Static<typeof ServiceTypeAdded>

/** The events of a `carrier-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const CarrierEvents = { CarrierCreated, CarrierUpdated, CarrierCredentialsIssued, CarrierCertificationDecided, ServiceTypeAdded } as const
