import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
/** bigint: `pg` returns it as a string, PGlite as a number; write numbers. */
type Int8 = ColumnType<number | string, number, number>
type Int8Null = ColumnType<number | string | null, number | null, number | null>
type Json<T> = ColumnType<T, string, string>

// Column meanings: docs/read-models.md.

export interface ShipmentsTable {
  id: Int8
  ulid: string
  external_reference: string | null
  control_number: string
  service_type_id: Int8Null
  service_type_code: string | null
  service_type_name: string | null
  carrier_hub_id: string | null
  integration: 'custom' | 'service_routes'
  shipper_id: string
  shipper_internal_id: Int8
  shipper_name: string
  shipper_subdomain: string
  carrier_id: string
  carrier_internal_id: Int8
  carrier_name: string
  carrier_subdomain: string
  status: string
  substatus: string | null
  carrier_phase: string
  carrier_status: string | null
  in_return: boolean
  final_status: string | null
  origin_address_id: string
  destination_address_id: string
  total_packages: number
  total_grams: Int8
  total_cm3: Int8
  declared_value: number
  declared_value_currency: string | null
  is_public: boolean
  requires_pickup: boolean
  merchant: Json<{ name: string; code: string } | null> | null
  related_shipment_id: Int8Null
  related_type: string | null
  custom_data: Json<Record<string, unknown> | null> | null
  documents: Json<unknown> | null
  tracking_number: string | null
  tracking_url: string | null
  promised_delivery_at: TsNull
  documented_at: TsNull
  ready_at: TsNull
  label_printed_at: TsNull
  shipped_at: TsNull
  delivered_at: TsNull
  finished_at: TsNull
  cancelled_at: TsNull
  expired_at: TsNull
  created_at: Ts
  updated_at: Ts
  stream_version: number
  change_seq: Int8
  /** The latest updated_at of any change up to change_seq: non-decreasing in change_seq. */
  feed_watermark: Ts
}

export interface ShipmentPackagesTable {
  shipment_id: Int8
  id: Int8
  position: number
  ulid: string
  shipper_id: string
  carrier_id: string
  reused: boolean
  label_code: string
  external_reference: string | null
  description: string | null
  grams: Int8
  weight_original: number | null
  weight_unit: string
  length_cm: number
  length_original: number | null
  length_unit: string
  width_cm: number
  width_original: number | null
  width_unit: string
  height_cm: number
  height_original: number | null
  height_unit: string
  temperature_min_c: number | null
  temperature_min_original: number | null
  temperature_min_unit: string | null
  temperature_max_c: number | null
  temperature_max_original: number | null
  temperature_max_unit: string | null
  is_flammable: boolean
  is_corrosive: boolean
  is_fragile: boolean
  classification: string | null
  un_code: string | null
  declared_value_amount: number
  declared_value_currency: string | null
  created_at: Ts
}

export interface AddressesTable {
  id: string
  organization_id: string
  place_id: string | null
  name: string
  street: string
  street_number: string
  floor: string | null
  apartment: string | null
  reference: string | null
  zipcode: string | null
  phone: string | null
  email: string | null
  document_type: string | null
  document_number: string | null
  city_id: Int8Null
  city_name: string | null
  state_id: Int8Null
  state_code: string | null
  state_name: string | null
  country_id: Int8Null
  country_iso: string | null
  country_name: string | null
  geo_latitude: number | null
  geo_longitude: number | null
  /** exact | city | state | country (src/infrastructure/geo/precision.ts); null on rows projected before it, until a rebuild. */
  geo_precision: ColumnType<string | null, string | null | undefined, string | null>
  created_at: Ts
}

export interface ShipmentStatusHistoryTable {
  shipment_id: Int8
  stream_version: number
  event_type: string
  status: string
  substatus: string | null
  carrier_status: string | null
  reason: string | null
  message: string | null
  source: string
  signed_by: string | null
  occurred_at: Ts
  recorded_at: Ts
}

export interface ShipmentAttachmentsTable {
  id: string
  shipment_id: Int8
  filename: string
  content_type: string
  size: Int8
  sha256: string
  blob_key: string
  description: string | null
  uploaded_by: string
  uploaded_at: Ts
}

export interface ShipmentStatusCatalogTable {
  organization_id: string
  code: string
  name: string | null
  color: string | null
  updated_at: Ts
}

/** One row per organization that lists the shipment: the shipper's, and the carrier's when it is another organization. */
export interface ShipmentListingsTable {
  org_id: string
  shipment_id: Int8
  status: string
  created_at: Ts
  external_reference: string | null
}

/** An organization's listed shipments per status and UTC day of created_at (no row at zero). */
export interface ShipmentListingCountsTable {
  org_id: string
  status: string
  /** A `date`; write 'YYYY-MM-DD', read it through to_char (`pg` would make a local-time Date of it). */
  day: ColumnType<unknown, string, string>
  n: Int8
}

export interface ShipmentsTables {
  shipments: ShipmentsTable
  shipment_listings: ShipmentListingsTable
  shipment_listing_counts: ShipmentListingCountsTable
  shipment_packages: ShipmentPackagesTable
  addresses: AddressesTable
  shipment_status_history: ShipmentStatusHistoryTable
  shipment_attachments: ShipmentAttachmentsTable
  shipment_status_catalog: ShipmentStatusCatalogTable
}
