import { Type, type Static } from 'typebox'

// Event payloads of the tariff stream (`tariff-<trf_id>`), version 1.

export const TariffCreated = Type.Object({
  id: Type.String(),
  carrier_id: Type.String(),
  name: Type.String(),
  currency: Type.String(),
  service_type_id: Type.Integer(),
  volumetric_divisor: Type.Number(),
  created_at: Type.String(),
})
export type TariffCreated = Static<typeof TariffCreated>

const ZipRange = Type.Object({ from: Type.String(), to: Type.String() })
export const TariffZone = Type.Object({
  code: Type.String(),
  name: Type.String(),
  countries: Type.Optional(Type.Array(Type.String())),
  states: Type.Optional(Type.Array(Type.String())),
  city_ids: Type.Optional(Type.Array(Type.Integer())),
  zipcodes: Type.Optional(Type.Array(ZipRange)),
})
export const TariffRate = Type.Object({
  origin_zone: Type.String(),
  destination_zone: Type.String(),
  max_grams: Type.Integer(),
  price: Type.Number(),
  lead_time_days: Type.Integer(),
})

/** The whole zone and rate table; a later publication replaces it. */
export const TariffRatesPublished = Type.Object({
  zones: Type.Array(TariffZone),
  rates: Type.Array(TariffRate),
  published_at: Type.String(),
})
export type TariffRatesPublished = Static<typeof TariffRatesPublished>

/** The tariff becomes the active one of its service type; the one active before is no longer. */
export const TariffActivated = Type.Object({
  carrier_id: Type.String(),
  service_type_id: Type.Integer(),
  activated_at: Type.String(),
})
export type TariffActivated = Static<typeof TariffActivated>

/** The events of a `tariff-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const TariffEvents = { TariffCreated, TariffRatesPublished, TariffActivated } as const
