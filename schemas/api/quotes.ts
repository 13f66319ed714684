import { Type, type Static } from 'typebox'
import { Nullable } from './common.js'
import { AddressInput, MAX_PACKAGES, PackageInput } from './shipments.js'

/** The spec gives quotes the same AddressInput and PackageInput as shipment creation: one schema for both. */
export const QuoteBody = Type.Object({
  origin: AddressInput,
  destination: AddressInput,
  packages: Type.Array(PackageInput, { minItems: 1, maxItems: MAX_PACKAGES }),
  declared_value: Type.Optional(Nullable(Type.Number({ minimum: 0 }))),
  shipper_id: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'required if the caller is a carrier' }))),
  carrier_id: Type.Optional(Nullable(Type.String({ maxLength: 64, description: 'required if the caller is a shipper: an organization (org_…) or one hub carrier (car_…)' }))),
}, { title: 'QuoteRequest', additionalProperties: false })
export type QuoteBody = Static<typeof QuoteBody>

export const Quote = Type.Object({
  service_type_id: Type.Integer(),
  service_type_name: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
  estimated_delivery_days: Nullable(Type.Integer()),
}, { title: 'Quote' })
export type Quote = Static<typeof Quote>

export const QuotesResponse = Type.Object({ quotes: Type.Array(Quote) }, { title: 'Quotes' })

/** What the quote callback must answer (DESIGN §3.5). */
export const QuoteCallbackReply = Type.Object({
  price: Type.Number({ minimum: 0 }),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  estimated_delivery_days: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
})
