import { Type, type Static } from 'typebox'
import { Nullable } from './common.js'
import { ServiceType } from './carriers.js'

export const TariffZone = Type.Object({
  code: Type.String(),
  name: Type.String(),
  countries: Type.Optional(Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2' })),
  states: Type.Optional(Type.Array(Type.String(), { description: 'state names or ISO 3166-2 codes' })),
  city_ids: Type.Optional(Type.Array(Type.Integer())),
  zipcodes: Type.Optional(Type.Array(Type.Object({ from: Type.String(), to: Type.String() }))),
}, { title: 'TariffZone' })

export const TariffRate = Type.Object({
  origin_zone: Type.String(),
  destination_zone: Type.String(),
  max_grams: Type.Integer({ description: 'inclusive upper bound of the weight bracket' }),
  price: Type.Number(),
  lead_time_days: Type.Integer(),
}, { title: 'TariffRate' })

export const Tariff = Type.Object({
  id: Type.String({ description: 'prefix trf_' }),
  name: Type.String(),
  currency: Type.String(),
  service_type: ServiceType,
  volumetric_divisor: Type.Number(),
  status: Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('inactive')], {
    description: 'draft: never activated; active: prices quotes of its service type; inactive: another tariff took over',
  }),
  zones: Type.Array(TariffZone),
  rates: Type.Array(TariffRate),
  rates_published_at: Nullable(Type.String({ format: 'date-time' })),
  activated_at: Nullable(Type.String({ format: 'date-time' })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
}, { title: 'Tariff' })
export type Tariff = Static<typeof Tariff>

export const CreateTariffBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  service_type: Type.Object({
    code: Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_.-]+$' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
  }, { additionalProperties: false }),
  volumetric_divisor: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, default: 5000 })),
}, { title: 'CreateTariffRequest', additionalProperties: false })
export type CreateTariffBody = Static<typeof CreateTariffBody>

/** The shape is checked item by item by `validateRates` so every bad field gets its dot path. */
export const PublishRatesBody = Type.Object({
  zones: Type.Array(Type.Unknown(), { maxItems: 1000, description: 'TariffZone[]' }),
  rates: Type.Array(Type.Unknown(), { maxItems: 20000, description: 'TariffRate[]' }),
}, { title: 'PublishTariffRatesRequest', additionalProperties: false })

export const TariffIdParams = Type.Object({ tariff_id: Type.String({ maxLength: 64 }) })
export const TariffEnvelope = Type.Object({ tariff: Tariff }, { title: 'TariffEnvelope' })
export const TariffList = Type.Object({ tariffs: Type.Array(Tariff) }, { title: 'TariffList' })
