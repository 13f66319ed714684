import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, PaginationLinks, PaginationMeta } from './common.js'

/** What a recipient reads after a failed delivery attempt, per failure reason (`default`: any reason without its own). */
const AttemptMessage = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' })
export const DeliveryAttemptMessages = Type.Object({
  default: Type.Optional(AttemptMessage), no_answer: Type.Optional(AttemptMessage), bad_address: Type.Optional(AttemptMessage),
  rejected: Type.Optional(AttemptMessage), damaged: Type.Optional(AttemptMessage), closed: Type.Optional(AttemptMessage), other: Type.Optional(AttemptMessage),
}, {
  title: 'DeliveryAttemptMessages', additionalProperties: false,
  description: 'what the public tracking page tells a recipient after a failed delivery attempt, per failure reason; a reason without its own text uses `default`, else the page\'s own',
})

export const OrganizationSettings = Type.Object({
  time_zone: Type.String({ description: 'the IANA time zone the organization\'s pages show times in: the one set, else the `timezone` it was created with (when not UTC), else its operational address\'s (city, else country), else UTC' }),
  time_zone_source: Type.Union([Type.Literal('setting'), Type.Literal('organization'), Type.Literal('country'), Type.Literal('default')]),
  delivery_attempt_messages: DeliveryAttemptMessages,
  public_proof_photos: Type.Boolean({ description: 'proof-of-delivery photos show on the public tracking page (default false)' }),
}, { title: 'OrganizationSettings', description: 'the organization\'s display settings: `GET` and `PATCH /organizations/my/settings`' })

export const OrganizationSettingsEnvelope = Type.Object({ settings: OrganizationSettings }, { title: 'OrganizationSettingsEnvelope' })

export const UpdateOrganizationSettingsBody = Type.Object({
  time_zone: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64, description: 'an IANA time zone name, e.g. Europe/Madrid; null: back to the default' }))),
  delivery_attempt_messages: Type.Optional(DeliveryAttemptMessages),
  public_proof_photos: Type.Optional(Type.Boolean()),
}, { title: 'UpdateOrganizationSettingsRequest', additionalProperties: false, minProperties: 1 })
export type UpdateOrganizationSettingsBody = Static<typeof UpdateOrganizationSettingsBody>

export const Organization = Type.Object({
  id: Type.String({ description: 'public id, prefix org_' }),
  name: Type.String(),
  subdomain: Type.String(),
  custom_domain: Nullable(Type.String()),
  locale: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  suspended_at: Nullable(Type.String({ format: 'date-time' })),
  operational_address_id: Nullable(Type.String()),
  roles: Type.Array(Type.String()),
  market: Nullable(Type.String()),
  carriers_enabled: Type.Boolean(),
  default_service_type: Nullable(Type.Object({ id: Type.Integer(), name: Type.String() })),
  visual_settings: Type.Object({ logo_url: Nullable(Type.String()), primary_color: Nullable(Type.String()) }),
}, { title: 'Organization' })
export type Organization = Static<typeof Organization>

export const CreateOrganizationBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  subdomain: Type.String({ minLength: 3, maxLength: 63, pattern: '^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$', description: 'DNS label, lower case' }),
  roles: Type.Array(Type.Union([Type.Literal('carrier'), Type.Literal('shipper')]), { minItems: 1, maxItems: 2, uniqueItems: true }),
  currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3 })),
  locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35, pattern: '^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$' })),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  market: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  carriers_enabled: Type.Optional(Type.Boolean()),
}, { title: 'CreateOrganizationRequest', additionalProperties: false })
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>

export const OrgIdParams = Type.Object({ org_id: Type.String({ maxLength: 64 }) })
export const TokenIdParams = Type.Object({ token_id: Type.String({ maxLength: 64 }) })

export const AccessTokenResponse = Type.Object({ access_token: Type.String(), token_id: Type.String() }, { title: 'AccessToken' })

export const CreateContractBody = Type.Object({
  carrier_id: Type.String({ minLength: 1, maxLength: 64 }),
  shipper_id: Type.String({ minLength: 1, maxLength: 64 }),
}, { title: 'CreateContractRequest', additionalProperties: false })

export const Contract = Type.Object({
  id: Type.String(),
  carrier_id: Type.String(),
  shipper_id: Type.String(),
  status: Type.String(),
  signed_at: Type.String({ format: 'date-time' }),
}, { title: 'Contract' })

export const Place = Type.Object({
  id: Type.String({ description: 'prefix ple_' }),
  org_id: Type.Integer({ description: 'internal id of the owning organization' }),
  name: Type.String(),
  street: Nullable(Type.String()),
  street_number: Nullable(Type.String()),
  floor: Nullable(Type.String()),
  apartment: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  phone_raw: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  email: Nullable(Type.String()),
  zipcode: Nullable(Type.String()),
  city: Type.Object({ id: Type.Integer(), name: Type.String() }),
  state: Type.Object({ code: Type.String(), name: Type.String() }),
  country: Type.Object({ code: Type.String(), name: Type.String() }),
  geo_latitude: Nullable(Type.Number()),
  geo_longitude: Nullable(Type.Number()),
}, { title: 'Place' })
export type Place = Static<typeof Place>

const OptStr = (max: number) => Type.Optional(Nullable(Type.String({ maxLength: max })))

export const CreatePlaceBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  street: Type.String({ minLength: 1, maxLength: 100 }),
  street_number: Type.String({ minLength: 1, maxLength: 10 }),
  floor: OptStr(5),
  apartment: OptStr(10),
  reference: OptStr(255),
  zipcode: OptStr(20),
  phone: OptStr(30),
  email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 190 }))),
  city_id: Type.Optional(Type.Integer({ minimum: 1 })),
  city: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  state_id: Type.Optional(Type.Integer({ minimum: 1 })),
  state: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  country_id: Type.Optional(Type.Integer({ minimum: 1 })),
  country: Type.Optional(Type.String({ minLength: 2, maxLength: 2 })),
  geo_latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
  geo_longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
  operational: Type.Optional(Type.Boolean({ description: 'make it the organization\'s operational address' })),
}, { title: 'CreatePlaceRequest', additionalProperties: false })
export type CreatePlaceBody = Static<typeof CreatePlaceBody>

export const ContractsQuery = Type.Object({
  license: Type.Optional(Type.Union([Type.Literal('shipper'), Type.Literal('carrier')], { default: 'shipper' })),
  'filter[global]': Type.Optional(Type.String({ maxLength: 100 })),
  sort: Type.Optional(Type.Union([
    Type.Literal('organizations.name'), Type.Literal('-organizations.name'),
    Type.Literal('markets.name'), Type.Literal('-markets.name'),
  ])),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  cursor: ListingCursor,
}, { additionalProperties: false })
export type ContractsQuery = Static<typeof ContractsQuery>

export const ContractsResponse = Type.Object({
  organizations: Type.Object({
    data: Type.Array(Organization),
    links: PaginationLinks,
    meta: PaginationMeta,
  }),
}, { title: 'ContractsPage' })

export const OrganizationEnvelope = Type.Object({ organization: Organization }, { title: 'OrganizationEnvelope' })
export const CreatedOrganization = Type.Object({
  organization: Organization,
  access_token: Type.String({ description: 'shown once' }),
  token_id: Type.String({ description: 'tok_…: names the token for revocation' }),
}, { title: 'CreatedOrganization' })
export const PlaceEnvelope = Type.Object({ place: Place }, { title: 'PlaceEnvelope' })
export const PlaceList = Type.Object({ places: Type.Array(Place) }, { title: 'PlaceList' })
export const ContractEnvelope = Type.Object({ contract: Contract }, { title: 'ContractEnvelope' })
export const RevokedToken = Type.Object({ success: Type.Boolean() }, { title: 'RevokedToken' })
