// What a label needs, already resolved from the shipment read model: the renderers do no I/O.

export interface LabelAddress {
  name: string;
  street: string;
  street_number: string;
  floor: string | null;
  apartment: string | null;
  zipcode: string | null;
  city: string | null;
  state: string | null;
  country: string | null;
  phone: string | null;
}

export interface LabelPackage {
  id: number;
  label_code: string;
  grams: number;
  length_cm: number;
  width_cm: number;
  height_cm: number;
  description: string | null;
}

export interface LabelInput {
  shipment_id: number;
  ulid: string;
  control_number: string;
  external_reference: string | null;
  carrier_name: string;
  shipper_name: string;
  service_type_name: string | null;
  /** ISO 8601 date-time; also the PDF CreationDate, so the same input gives the same bytes. */
  created_at: string;
  origin: LabelAddress;
  destination: LabelAddress;
  packages: LabelPackage[];
}
