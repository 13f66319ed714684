import { Type, type Static } from 'typebox'

// Event payloads of the shipment stream `shipment-<id>` (and the control-number reservation
// streams), version 1. DESIGN §1: an old payload is upcast on read, never rewritten.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

export const OrganizationRef = Type.Object({
  /** Public id `org_…`. */
  id: Type.String(),
  internal_id: Type.Integer(),
  name: Type.String(),
  subdomain: Type.String(),
})
export type OrganizationRef = Static<typeof OrganizationRef>

/** An address as stored with the shipment (a snapshot: later edits elsewhere never change it). */
export const AddressSnapshot = Type.Object({
  id: Type.String(),
  /** True when this shipment created the address (mode 3 or copied from a place); false when reused by id. */
  created: Type.Boolean(),
  /** Public id of the organization that created the address. */
  organization_id: Type.String(),
  place_id: Nullable(Type.String()),
  name: Type.String(),
  street: Type.String(),
  street_number: Type.String(),
  floor: Nullable(Type.String()),
  apartment: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  zipcode: Nullable(Type.String()),
  phone: Nullable(Type.String()),
  email: Nullable(Type.String()),
  document_type: Nullable(Type.String()),
  document_number: Nullable(Type.String()),
  city: Nullable(Type.Object({ id: Type.Integer(), name: Type.String() })),
  state: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), code: Nullable(Type.String()) })),
  country: Nullable(Type.Object({ id: Type.Integer(), name: Type.String(), iso: Type.String() })),
  geo_latitude: Nullable(Type.Number()),
  geo_longitude: Nullable(Type.Number()),
  /**
   * Where the coordinates come from (DESIGN §3.10): `exact` (the caller's), `city`, or the `state`'s or
   * `country`'s centre (an unknown town, §3.4b). Recorded from issue 23 on; older snapshots get it
   * derived (src/infrastructure/geo/precision.ts), null without coordinates.
   */
  geo_precision: Type.Optional(Nullable(Type.Union([Type.Literal('exact'), Type.Literal('city'), Type.Literal('state'), Type.Literal('country')]))),
})
export type AddressSnapshot = Static<typeof AddressSnapshot>

/** A measure as stored: the normalized value, and what the caller typed (null original when sent normalized). */
export const MeasureSnapshot = Type.Object({
  value: Type.Number(),
  original_value: Nullable(Type.Number()),
  unit: Type.String(),
})
export type MeasureSnapshot = Static<typeof MeasureSnapshot>

export const PackageSnapshot = Type.Object({
  id: Type.Integer(),
  ulid: Type.String(),
  /** True when reused by `id` from an earlier shipment. */
  reused: Type.Boolean(),
  label_code: Type.String(),
  external_reference: Nullable(Type.String()),
  description: Nullable(Type.String()),
  weight: MeasureSnapshot,
  length: MeasureSnapshot,
  width: MeasureSnapshot,
  height: MeasureSnapshot,
  temperature_min: Nullable(MeasureSnapshot),
  temperature_max: Nullable(MeasureSnapshot),
  is_flammable: Type.Boolean(),
  is_corrosive: Type.Boolean(),
  is_fragile: Type.Boolean(),
  classification: Nullable(Type.String()),
  un_code: Nullable(Type.String()),
  declared_value_amount: Type.Number(),
  declared_value_currency: Nullable(Type.String()),
})
export type PackageSnapshot = Static<typeof PackageSnapshot>

export const ServiceTypeRef = Type.Object({
  id: Nullable(Type.Integer()),
  code: Nullable(Type.String()),
  name: Nullable(Type.String()),
  /** Carrier-hub carrier (`car_…`) offering the service type, when resolved. */
  carrier_hub_id: Nullable(Type.String()),
})
export type ServiceTypeRef = Static<typeof ServiceTypeRef>

export const Integration = Type.Union([Type.Literal('custom'), Type.Literal('service_routes')])
export type Integration = Static<typeof Integration>

export const ShipmentCreated = Type.Object({
  id: Type.Integer(),
  ulid: Type.String(),
  external_reference: Nullable(Type.String()),
  control_number: Type.String(),
  /** As requested (`service_type_id` / `service_type_code`) and as resolved; null when neither was sent. */
  service_type: Nullable(ServiceTypeRef),
  /**
   * `custom`: the carrier uploads the label (starts in Processing). `service_routes`: the platform
   * makes label, tracking and statuses (starts in Pending preparation, DESIGN §3.5).
   */
  integration: Integration,
  shipper: OrganizationRef,
  carrier: OrganizationRef,
  origin: AddressSnapshot,
  destination: AddressSnapshot,
  packages: Type.Array(PackageSnapshot),
  declared_value: Type.Number(),
  declared_value_currency: Nullable(Type.String()),
  requires_pickup: Type.Boolean(),
  is_public: Type.Boolean(),
  merchant: Nullable(Type.Object({ name: Type.String(), code: Type.String() })),
  promised_delivery_at: Nullable(Type.String()),
  related_shipment_id: Nullable(Type.Integer()),
  related_type: Nullable(Type.String()),
  /** Quote data handed to the carrier (`custom_data` of the carrier API). */
  custom_data: Nullable(Type.Record(Type.String(), Type.Unknown())),
  created_at: Type.String(),
})
export type ShipmentCreated = Static<typeof ShipmentCreated>

export const ShipmentCancelled = Type.Object({
  cancelled_at: Type.String(),
  reason: Nullable(Type.String()),
})
export type ShipmentCancelled = Static<typeof ShipmentCancelled>

export const BlobRef = Type.Object({
  key: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
  filename: Nullable(Type.String()),
})
export type BlobRef = Static<typeof BlobRef>

/**
 * The carrier uploaded its documents (label PDF, optional ZPL and waybill). Stored as
 * `ShipmentDocumented` before the rename to the design card's name (schemas/events/upcasters.ts).
 */
export const LabelUploaded = Type.Object({
  label: BlobRef,
  label_zpl: Nullable(BlobRef),
  waybill: Nullable(BlobRef),
  documented_at: Type.String(),
})
export type LabelUploaded = Static<typeof LabelUploaded>

export const TrackingNumberSet = Type.Object({
  tracking_number: Type.String(),
  tracking_url: Nullable(Type.String()),
  set_at: Type.String(),
})
export type TrackingNumberSet = Static<typeof TrackingNumberSet>

export const ShipmentReady = Type.Object({ ready_at: Type.String() })
export type ShipmentReady = Static<typeof ShipmentReady>

export const CarrierStatus = Type.Union([
  Type.Literal('received'), Type.Literal('out_for_delivery'), Type.Literal('soon_deliver'), Type.Literal('delivered'),
  Type.Literal('failed_delivery'), Type.Literal('not_delivered'), Type.Literal('returned'),
])
export type CarrierStatus = Static<typeof CarrierStatus>

export const RoutesStatus = Type.Union([
  Type.Literal('pending'), Type.Literal('shipped'), Type.Literal('picked_up'), Type.Literal('in_facility'),
  Type.Literal('out_for_delivery'), Type.Literal('attempted_delivery'), Type.Literal('delivered'),
  Type.Literal('not_delivered'), Type.Literal('cancelled'), Type.Literal('returned'),
])
export type RoutesStatus = Static<typeof RoutesStatus>

/** The carrier reported a status. Stored as `CarrierStatusReported` before the rename (schemas/events/upcasters.ts). */
export const StatusReported = Type.Object({
  status: CarrierStatus,
  reason: Nullable(Type.String()),
  message: Nullable(Type.String()),
  /** When it happened per the carrier (defaults to the report time). */
  occurred_at: Type.String(),
  reported_at: Type.String(),
  /** The routes-API status it maps to (DESIGN §3.5), so readers need no mapping table. */
  routes_status: RoutesStatus,
  substatus: Nullable(Type.String()),
  /** True from the failed delivery (rejected / dangerous_area) that started the return flow on. */
  in_return: Type.Boolean(),
  final: Type.Boolean(),
  /**
   * Who moved the shipment: absent on the carrier API's reports; `routes` when the platform's own
   * operations (tasks of a `service_routes` carrier, DESIGN §3.9) set it (src/shipments/routes-status.ts).
   */
  source: Type.Optional(Type.Literal('routes')),
  /** Who signed for a `delivered` set by the routes operations (the delivery task's `signed_by`). */
  signed_by: Type.Optional(Nullable(Type.String())),
  /** The caller's idempotency key (the process manager's action key): a second call with it appends nothing. */
  key: Type.Optional(Nullable(Type.String())),
})
export type StatusReported = Static<typeof StatusReported>

export const ShipmentExpired = Type.Object({ expired_at: Type.String() })
export type ShipmentExpired = Static<typeof ShipmentExpired>

export const LabelPrinted = Type.Object({
  printed_at: Type.String(),
  format: Type.Union([Type.Literal('pdf'), Type.Literal('zpl')]),
  source: Type.Union([Type.Literal('carrier'), Type.Literal('platform')]),
})
export type LabelPrinted = Static<typeof LabelPrinted>

export const AttachmentAdded = Type.Object({
  id: Type.String(),
  filename: Type.String(),
  blob: BlobRef,
  description: Nullable(Type.String()),
  /** Public id of the uploading organization. */
  uploaded_by: Type.String(),
  uploaded_at: Type.String(),
})
export type AttachmentAdded = Static<typeof AttachmentAdded>

/** Reservation of a control number: stream `control-number-<carrier org id>-<code>`, appended with no_stream. */
export const ControlNumberReserved = Type.Object({
  carrier_id: Type.String(),
  control_number: Type.String(),
  /** The shipment's ulid (its integer id is drawn in parallel with the reservation). */
  shipment_ulid: Type.String(),
  reserved_at: Type.String(),
})
export type ControlNumberReserved = Static<typeof ControlNumberReserved>

/** The events of a `shipment-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const ShipmentEvents = {
  ShipmentCreated, ShipmentCancelled, LabelUploaded, TrackingNumberSet, ShipmentReady, StatusReported, ShipmentExpired, LabelPrinted,
  AttachmentAdded,
} as const

/** The event of a `control-number-<carrier>-<code>` stream. */
export const ControlNumberEvents = { ControlNumberReserved } as const
