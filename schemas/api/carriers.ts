import { Type, type Static } from 'typebox'
import { CheckedEnum, Nullable } from './common.js'
import { Shipment } from './shipments.js'

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'absolute http(s) URL; private addresses refused unless ALLOW_PRIVATE_URLS=true' })

export const ServiceType = Type.Object({
  id: Type.Integer(),
  code: Type.String(),
  name: Type.String(),
}, { title: 'ServiceType' })
export type ServiceType = Static<typeof ServiceType>

export const Carrier = Type.Object({
  id: Type.String({ description: 'prefix car_' }),
  name: Type.String(),
  integration: Type.Union([Type.Literal('custom'), Type.Literal('service_routes')]),
  visibility: Type.Union([Type.Literal('private'), Type.Literal('public')]),
  access_mode: Type.Union([Type.Literal('open'), Type.Literal('contract')]),
  certification_status: Type.Union([Type.Literal('not_required'), Type.Literal('pending'), Type.Literal('certified'), Type.Literal('rejected')]),
  notification_url: Nullable(Type.String()),
  quote_url: Nullable(Type.String()),
  quote_mode: Type.Union([Type.Literal('tariff'), Type.Literal('api')]),
  service_types: Type.Array(ServiceType),
  organization_id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'Carrier' })
export type Carrier = Static<typeof Carrier>

export const CreateCarrierBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  integration: Type.Union([Type.Literal('custom'), Type.Literal('service_routes')]),
  visibility: Type.Union([Type.Literal('private'), Type.Literal('public')]),
  access_mode: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('contract')])),
  notification_url: Type.Optional(Nullable(Url)),
  quote_url: Type.Optional(Nullable(Url)),
  quote_mode: Type.Optional(Type.Union([Type.Literal('tariff'), Type.Literal('api')])),
  service_types: Type.Optional(Type.Array(Type.Object({
    code: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_.-]+$' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
  }, { additionalProperties: false }), { maxItems: 50 })),
}, { title: 'CreateCarrierRequest', additionalProperties: false })
export type CreateCarrierBody = Static<typeof CreateCarrierBody>

export const UpdateCarrierBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  visibility: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('public')])),
  access_mode: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('contract')])),
  notification_url: Type.Optional(Nullable(Url)),
  quote_url: Type.Optional(Nullable(Url)),
  quote_mode: Type.Optional(Type.Union([Type.Literal('tariff'), Type.Literal('api')])),
}, { title: 'UpdateCarrierRequest', additionalProperties: false })
export type UpdateCarrierBody = Static<typeof UpdateCarrierBody>

/** What a carrier may change about itself through `PATCH /carrier/v1/me`. */
export const UpdateMeBody = Type.Object({
  notification_url: Type.Optional(Nullable(Url)),
  quote_url: Type.Optional(Nullable(Url)),
  quote_mode: Type.Optional(Type.Union([Type.Literal('tariff'), Type.Literal('api')])),
}, { title: 'UpdateCarrierAccountRequest', additionalProperties: false })
export type UpdateMeBody = Static<typeof UpdateMeBody>

export const CreateServiceTypeBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_.-]+$' }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
}, { title: 'CreateServiceTypeRequest', additionalProperties: false })

export const CertificationBody = Type.Object({
  status: Type.Union([Type.Literal('certified'), Type.Literal('rejected')]),
}, { title: 'CertificationRequest', additionalProperties: false })

export const CarrierIdParams = Type.Object({ id: Type.String({ maxLength: 64 }) })
export const AdminCarrierIdParams = Type.Object({ carrier_id: Type.String({ maxLength: 64 }) })

export const CarrierEnvelope = Type.Object({ carrier: Carrier }, { title: 'CarrierEnvelope' })
export const CarrierWithCredentials = Type.Object({
  carrier: Carrier,
  api_key: Type.String({ description: 'shown once' }),
  hmac_secret: Type.String({ description: 'whsec_…, shown once' }),
  key_id: Type.String(),
}, { title: 'CarrierWithCredentials' })
export const CarrierList = Type.Object({ carriers: Type.Array(Carrier) }, { title: 'CarrierList' })

// ── Carrier API: shipments ───────────────────────────────────────────────────────────────────

export const CarrierShipmentsQuery = Type.Object({
  updated_since: Type.Optional(Type.String({ format: 'date-time', description: 'first page only; the cursor carries it afterwards' })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'meta.next_cursor of the previous page' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
})

export const CarrierShipmentParams = Type.Object({ shipment_id: Type.Integer({ minimum: 1 }) })

/** Field types only: the shipment aggregate checks the values and reports every failing field. */
export const ReportStatusBody = Type.Object({
  status: CheckedEnum(['received', 'out_for_delivery', 'soon_deliver', 'delivered', 'failed_delivery', 'not_delivered', 'returned'], { maxLength: 50, title: 'CarrierStatus' }),
  reason: Type.Optional(Nullable(CheckedEnum(['receiver_absent', 'bad_address', 'rejected', 'dangerous_area', 'lost'], {
    maxLength: 50, title: 'CarrierStatusReason', description: 'failed_delivery: receiver_absent, bad_address, rejected or dangerous_area; not_delivered: lost',
  }))),
  message: Type.Optional(Nullable(Type.String({ description: 'max 150 characters; kept in the shipment history' }))),
  occurred_at: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'default now; not before the shipment was created' }))),
}, { title: 'ReportStatusRequest', additionalProperties: false })

export const SetTrackingBody = Type.Object({
  tracking_number: Type.String({ minLength: 1, maxLength: 100 }),
  tracking_url: Type.Optional(Nullable(Type.String({ maxLength: 2048, format: 'uri' }))),
}, { title: 'SetTrackingRequest', additionalProperties: false })

/** The routes-API shipment plus what the carrier side needs (DESIGN §3.5). */
export const CarrierShipment = Type.Object({
  ...Shipment.properties,
  carrier_state: Type.String({ description: 'processing, pending_preparation, ready_to_ship, in_carrier_hands' }),
  carrier_status: Nullable(Type.String({ description: 'the last status the carrier reported' })),
  in_return: Type.Boolean(),
  documented_at: Nullable(Type.String({ format: 'date-time' })),
  ready_at: Nullable(Type.String({ format: 'date-time' })),
  cancelled_at: Nullable(Type.String({ format: 'date-time' })),
  expired_at: Nullable(Type.String({ format: 'date-time' })),
  custom_data: Type.Record(Type.String(), Type.Unknown(), { description: 'quote data: custom_data.quote is the quote that priced the shipment' }),
}, { title: 'CarrierShipment' })
export const CarrierShipmentPage = Type.Object({ data: Type.Array(CarrierShipment), meta: Type.Object({ next_cursor: Type.String() }) }, { title: 'CarrierShipmentPage' })
export const CarrierShipmentEnvelope = Type.Object({ success: Type.Boolean(), shipment: CarrierShipment }, { title: 'CarrierShipmentEnvelope' })
