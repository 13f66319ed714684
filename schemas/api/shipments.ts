import { Type, type Static, type TSchema } from 'typebox'
import { ListingCursor, Nullable, PaginationLinks, PaginationMeta } from './common.js'

// Routes API: shipments (spec "Shipment", "Address", "AddressInput", "PackageInput", "Package",
// "Routes API: shipments"). Bounds are the spec's; the ones it leaves open are in docs/decisions.md.

export const MAX_PACKAGES = 100
export const MAX_BULK_TRACKING = 100
export const MAX_GRAMS = 10_000_000
export const MAX_CM = 10_000

const OptStr = (max: number, extra: Record<string, unknown> = {}) => Type.Optional(Nullable(Type.String({ maxLength: max, ...extra })))
const OptNum = (opts: Record<string, number> = {}) => Type.Optional(Nullable(Type.Number(opts)))

/**
 * One object for the three modes (existing `id`, saved `place_id`, new address); which fields
 * each mode allows or needs is checked in code so every problem is reported at once.
 */
export const AddressInput = Type.Object({
  id: OptStr(64),
  place_id: OptStr(64),
  name: OptStr(100),
  street: OptStr(100),
  street_number: OptStr(10),
  floor: OptStr(5),
  apartment: OptStr(10),
  reference: OptStr(255),
  city_id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  city: OptStr(100),
  state_id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  state: OptStr(100),
  country_id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  country: OptStr(2, { minLength: 2 }),
  zipcode: OptStr(20),
  phone: OptStr(64),
  email: OptStr(254, { format: 'email' }),
  document_type: OptStr(20),
  document_number: OptStr(40),
  geo_latitude: OptNum({ minimum: -90, maximum: 90 }),
  geo_longitude: OptNum({ minimum: -180, maximum: 180 }),
}, { title: 'AddressInput', additionalProperties: false })
export type AddressInput = Static<typeof AddressInput>

// Input units are tolerant (spec "PackageInput" rule 3: KG, inches, degree-C, lt are normalized), so
// requests take any spelling; responses give the canonical units below.
const Unit = (canonical: readonly string[]) => Type.Optional(Nullable(Type.String({
  maxLength: 20, description: `${canonical.join(', ')}, or another spelling of one (upper case, plurals, symbols: KG, lb, inches, °F)`,
})))
// Plain enums (not unions of literals): the response serializer checks an enum at once, where a
// union would be tried branch by branch for every measure of every package.
export const WeightUnit = Type.Enum(['g', 'kg', 'mg', 'lbs'], { type: 'string', title: 'WeightUnit' })
export const LengthUnit = Type.Enum(['cm', 'm', 'mm', 'in'], { type: 'string', title: 'LengthUnit' })
export const TemperatureUnit = Type.Enum(['celsius', 'fahrenheit'], { type: 'string', title: 'TemperatureUnit' })
const canonical = (units: { enum: readonly string[] }) => units.enum
export const PackageInput = Type.Object({
  id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  external_reference: OptStr(50),
  description: OptStr(190),
  label_code: OptStr(20),
  length: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_CM }))),
  width: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_CM }))),
  height: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_CM }))),
  original_length: OptNum({ exclusiveMinimum: 0 }),
  original_width: OptNum({ exclusiveMinimum: 0 }),
  original_height: OptNum({ exclusiveMinimum: 0 }),
  length_unit: Unit(canonical(LengthUnit)),
  width_unit: Unit(canonical(LengthUnit)),
  height_unit: Unit(canonical(LengthUnit)),
  grams: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_GRAMS }))),
  original_weight: OptNum({ exclusiveMinimum: 0 }),
  weight_unit: Unit(canonical(WeightUnit)),
  declared_value_amount: OptNum({ minimum: 0 }),
  declared_value_currency: OptStr(4),
  un_code: OptStr(10),
  classification: OptStr(50),
  is_flammable: Type.Optional(Nullable(Type.Boolean())),
  is_corrosive: Type.Optional(Nullable(Type.Boolean())),
  is_fragile: Type.Optional(Nullable(Type.Boolean())),
  temperature_min: OptNum({ minimum: -273.15, maximum: 1000 }),
  temperature_max: OptNum({ minimum: -273.15, maximum: 1000 }),
  original_temperature_min: OptNum(),
  original_temperature_max: OptNum(),
  temperature_min_unit: Unit(canonical(TemperatureUnit)),
  temperature_max_unit: Unit(canonical(TemperatureUnit)),
}, { title: 'PackageInput', additionalProperties: false })
export type PackageInput = Static<typeof PackageInput>

export const CreateShipmentBody = Type.Object({
  origin: AddressInput,
  destination: AddressInput,
  packages: Type.Array(PackageInput, { minItems: 1, maxItems: MAX_PACKAGES }),
  external_reference: OptStr(50),
  declared_value: OptNum({ minimum: 0 }),
  declared_value_currency: OptStr(4),
  requires_pickup: Type.Optional(Nullable(Type.Boolean())),
  is_public: Type.Optional(Nullable(Type.Boolean())),
  shipper_id: OptStr(64),
  carrier_id: OptStr(64),
  service_type_id: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
  service_type_code: OptStr(50),
  merchant: Type.Optional(Nullable(Type.Object({
    name: Type.String({ minLength: 1, maxLength: 100 }),
    code: Type.String({ minLength: 1, maxLength: 50 }),
  }, { additionalProperties: false }))),
  promised_delivery_at: OptStr(40, { format: 'date-time' }),
}, { title: 'CreateShipmentRequest', additionalProperties: false })
export type CreateShipmentBody = Static<typeof CreateShipmentBody>

// ── Responses ───────────────────────────────────────────────────────────────────────────────

const NamedRef = Type.Object({ id: Type.Integer(), name: Type.String() })

export const Address = Type.Object({
  id: Type.String(),
  name: Type.String(),
  street: Type.String(),
  street_number: Type.String(),
  floor: Nullable(Type.String()),
  apartment: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  zipcode: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  email: Nullable(Type.String()),
  city: Nullable(NamedRef),
  state: Nullable(NamedRef),
  country: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), iso: Type.String() })),
  geo_latitude: Nullable(Type.Number()),
  geo_longitude: Nullable(Type.Number()),
  geo_precision: Nullable(Type.Union([Type.Literal('exact'), Type.Literal('city'), Type.Literal('state'), Type.Literal('country')], {
    title: 'GeoPrecision',
    description: '`exact`: coordinates sent by the caller; `city`: the city\'s point; `state`/`country`: an unknown town placed at its state\'s or country\'s centre (not a place to drive to: planning and ETAs leave it out)',
  })),
}, { title: 'Address' })

const measure = <V extends TSchema, U extends TSchema>(value: V, unit: U, title: string) =>
  Type.Object({ value, original_value: Nullable(Type.Number()), unit }, { title })
const WeightMeasure = measure(Type.Integer({ description: 'grams' }), WeightUnit, 'WeightMeasure')
const LengthMeasure = measure(Type.Number({ description: 'centimetres' }), LengthUnit, 'LengthMeasure')
const TemperatureMeasure = measure(Type.Number({ description: 'degrees Celsius' }), TemperatureUnit, 'TemperatureMeasure')

export const Package = Type.Object({
  id: Type.Integer(),
  label_code: Type.String(),
  external_reference: Nullable(Type.String()),
  description: Nullable(Type.String()),
  weight: WeightMeasure,
  grams: Type.Integer({ description: 'deprecated: use weight.value' }),
  length: LengthMeasure,
  width: LengthMeasure,
  height: LengthMeasure,
  temperature_min: Nullable(TemperatureMeasure),
  temperature_max: Nullable(TemperatureMeasure),
  is_flammable: Type.Boolean(),
  is_corrosive: Type.Boolean(),
  is_fragile: Type.Boolean(),
  classification: Nullable(Type.String()),
  un_code: Nullable(Type.String()),
  declared_value_amount: Type.Number(),
  declared_value_currency: Nullable(Type.String()),
}, { title: 'Package' })

const OrgRef = Type.Object({ id: Type.Integer(), name: Type.String(), subdomain: Type.String() }, { title: 'OrganizationRef' })
const DateTime = Nullable(Type.String({ format: 'date-time' }))

export const ShipmentStatus = Type.Object({
  code: Type.String(),
  name: Type.String(),
  color: Nullable(Type.String()),
  substatus: Nullable(Type.Object({ code: Type.String(), name: Type.String() })),
}, { title: 'ShipmentStatus' })

export const Shipment = Type.Object({
  id: Type.Integer(),
  ulid: Type.String(),
  external_reference: Nullable(Type.String()),
  control_number: Nullable(Type.String()),
  serviceType: Nullable(NamedRef),
  shipper: OrgRef,
  carrier: OrgRef,
  status: ShipmentStatus,
  origin: Address,
  destination: Address,
  packages: Type.Array(Package),
  totals: Type.Object({ total_packages: Type.Integer(), total_grams: Type.Number(), total_cm3: Type.Number() }),
  declared_value: Type.Number(),
  declared_value_currency: Nullable(Type.String()),
  is_public: Type.Boolean(),
  public_tracking_url: Nullable(Type.String({ description: 'the public tracking page (no token needed) when is_public; else null' })),
  requires_pickup: Type.Boolean(),
  related_shipment_id: Nullable(Type.Integer()),
  related_type: Nullable(Type.String()),
  merchant: Nullable(Type.Object({ name: Type.String(), code: Type.String() })),
  tracking_number: Nullable(Type.String()),
  tracking_url: Nullable(Type.String()),
  finished_at: DateTime,
  promised_delivery_at: DateTime,
  label_printed_at: DateTime,
  shipped_at: DateTime,
  delivered_at: DateTime,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'Shipment' })
export type Shipment = Static<typeof Shipment>

export const ShipmentEnvelope = Type.Object({ success: Type.Boolean(), shipment: Shipment }, { title: 'ShipmentEnvelope' })

export const ShipmentIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) })

export const GetShipmentQuery = Type.Object({
  as_of: Type.Optional(Type.String({ format: 'date-time', description: 'the shipment as it was at this instant, from the event log' })),
})

export const ListShipmentsQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 200, description: 'status code, or several separated by commas' })),
  external_reference: Type.Optional(Type.String({ maxLength: 50 })),
  created_from: Type.Optional(Type.String({ format: 'date-time' })),
  created_to: Type.Optional(Type.String({ format: 'date-time' })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  cursor: ListingCursor,
})
export type ListShipmentsQuery = Static<typeof ListShipmentsQuery>

export const ShipmentsPage = Type.Object({
  shipments: Type.Object({ data: Type.Array(Shipment), links: PaginationLinks, meta: PaginationMeta }),
}, { title: 'ShipmentsPage' })

export const CancelShipmentBody = Type.Union([Type.Object({ reason: OptStr(255) }, { additionalProperties: false }), Type.Null()], { title: 'CancelShipmentRequest' })

export const TrackingItem = Type.Object({
  status: Type.Object({ code: Type.String(), name: Type.String(), color: Nullable(Type.String()) }),
  substatus: Nullable(Type.Object({ code: Type.String(), name: Type.String() })),
  carrier_status: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  message: Nullable(Type.String()),
  occurred_at: Type.String({ format: 'date-time' }),
  recorded_at: Type.String({ format: 'date-time' }),
  source: Type.String({ description: 'routes_api, carrier_api, routes (the platform\'s own operations of a service_routes carrier) or system' }),
  signed_by: Nullable(Type.String({ description: 'who signed for the parcel, on a delivered set by the routes operations' })),
}, { title: 'TrackingItem' })

export const TrackingResponse = Type.Object({
  tracking_number: Nullable(Type.String()),
  tracking_url: Nullable(Type.String()),
  tracking: Type.Array(TrackingItem),
}, { title: 'Tracking' })

export const BulkTrackingBody = Type.Object({
  shipment_ids: Type.Array(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), { minItems: 1, maxItems: MAX_BULK_TRACKING, uniqueItems: true }),
}, { title: 'BulkTrackingRequest', additionalProperties: false })

export const BulkTrackingResponse = Type.Object({
  tracking: Type.Array(Type.Object({ shipment_id: Type.Integer(), tracking: Type.Array(TrackingItem) })),
}, { title: 'BulkTracking' })

export const Attachment = Type.Object({
  id: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
  description: Nullable(Type.String()),
  uploaded_by: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  url: Type.String(),
}, { title: 'Attachment' })

export const AttachmentParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  attachment_id: Type.String({ maxLength: 64 }),
})

export const LabelQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('pdf'), Type.Literal('zpl')])),
})

export const StatusCatalogItem = Type.Object({
  code: Type.String(),
  name: Type.String(),
  color: Nullable(Type.String()),
  substatuses: Type.Array(Type.Object({ code: Type.String(), name: Type.String() })),
}, { title: 'StatusCatalogItem' })

export const StatusCodeParams = Type.Object({ code: Type.String({ maxLength: 50 }) })

export const CustomizeStatusBody = Type.Object({
  name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 50 }))),
  color: Type.Optional(Nullable(Type.String({ pattern: '^#[0-9A-Fa-f]{6}$' }))),
}, { title: 'CustomizeShipmentStatusRequest', additionalProperties: false })

export const StoredEvent = Type.Object({
  position: Type.String(),
  stream_version: Type.Integer(),
  type: Type.String({ description: 'The event type under its current name, e.g. `LabelUploaded`, `StatusReported` (also for events stored under an older name).' }),
  data: Type.Unknown(),
  metadata: Type.Unknown(),
  recorded_at: Type.String({ format: 'date-time' }),
}, { title: 'StoredEvent' })
