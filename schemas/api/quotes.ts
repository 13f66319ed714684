import { Type, type Static } from 'typebox'
import { Nullable } from './common.js'

const OptStr = (max: number) => Type.Optional(Nullable(Type.String({ maxLength: max })))
const OptNum = Type.Optional(Nullable(Type.Number()))

/** Spec "AddressInput": `id`, `place_id`, or a new address (only its location matters to a quote). */
export const QuoteAddressInput = Type.Object({
  id: Type.Optional(Type.String({ maxLength: 64 })),
  place_id: Type.Optional(Type.String({ maxLength: 64 })),
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
  country: OptStr(56),
  zipcode: OptStr(20),
  phone: OptStr(32),
  email: OptStr(255),
  document_type: OptStr(20),
  document_number: OptStr(40),
  geo_latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
  geo_longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
}, { additionalProperties: false })

/** Spec "PackageInput": normalized measures or value + unit; the rest is accepted and ignored by a quote. */
export const QuotePackageInput = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1 })),
  external_reference: OptStr(50),
  description: OptStr(190),
  label_code: Type.Optional(Type.String({ maxLength: 20 })),
  grams: Type.Optional(Type.Integer({ minimum: 0 })),
  length: Type.Optional(Type.Integer({ minimum: 0 })),
  width: Type.Optional(Type.Integer({ minimum: 0 })),
  height: Type.Optional(Type.Integer({ minimum: 0 })),
  original_weight: Type.Optional(Type.Number({ minimum: 0 })),
  weight_unit: Type.Optional(Type.String({ maxLength: 20 })),
  original_length: Type.Optional(Type.Number({ minimum: 0 })),
  original_width: Type.Optional(Type.Number({ minimum: 0 })),
  original_height: Type.Optional(Type.Number({ minimum: 0 })),
  length_unit: Type.Optional(Type.String({ maxLength: 20 })),
  width_unit: Type.Optional(Type.String({ maxLength: 20 })),
  height_unit: Type.Optional(Type.String({ maxLength: 20 })),
  declared_value_amount: OptNum,
  declared_value_currency: OptStr(4),
  un_code: Type.Optional(Type.String()),
  classification: Type.Optional(Type.String()),
  is_flammable: Type.Optional(Type.Boolean()),
  is_corrosive: Type.Optional(Type.Boolean()),
  is_fragile: Type.Optional(Type.Boolean()),
  temperature_min: Type.Optional(Type.Number()),
  temperature_max: Type.Optional(Type.Number()),
  original_temperature_min: Type.Optional(Type.Number()),
  original_temperature_max: Type.Optional(Type.Number()),
  temperature_min_unit: Type.Optional(Type.String()),
  temperature_max_unit: Type.Optional(Type.String()),
}, { additionalProperties: false })

export const QuoteBody = Type.Object({
  origin: QuoteAddressInput,
  destination: QuoteAddressInput,
  packages: Type.Array(QuotePackageInput, { minItems: 1, maxItems: 500 }),
  declared_value: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  shipper_id: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'required if the caller is a carrier' }))),
  carrier_id: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'required if the caller is a shipper: an organization (org_…) or one hub carrier (car_…)' }))),
}, { additionalProperties: false })
export type QuoteBody = Static<typeof QuoteBody>

export const Quote = Type.Object({
  service_type_id: Type.Integer(),
  service_type_name: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
  estimated_delivery_days: Nullable(Type.Integer()),
})
export type Quote = Static<typeof Quote>

export const QuotesResponse = Type.Object({ quotes: Type.Array(Quote) })

/** What the quote callback must answer (DESIGN §3.5). */
export const QuoteCallbackReply = Type.Object({
  price: Type.Number({ minimum: 0 }),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  estimated_delivery_days: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
})
