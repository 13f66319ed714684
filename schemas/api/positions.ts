import { Type, type Static } from 'typebox'
import { Nullable } from './common.js'

// Drivers' positions (DESIGN §3.10): telemetry a driver's app reports in batches, not events.

/** Positions one call may carry. */
export const MAX_POSITIONS_PER_CALL = 500
/** `recorded_at` may be this far ahead of the server's clock (a phone's clock runs a little fast)… */
export const MAX_POSITION_AHEAD_MS = 60_000
/** …and this old (a phone that was offline sends its backlog). */
export const MAX_POSITION_AGE_MS = 24 * 3600_000

export const PositionInput = Type.Object({
  lat: Type.Number({ minimum: -90, maximum: 90, description: 'WGS84 latitude' }),
  lng: Type.Number({ minimum: -180, maximum: 180, description: 'WGS84 longitude' }),
  recorded_at: Type.String({ format: 'date-time', maxLength: 40, description: 'when the device took it: at most 1 minute ahead of the server and 24 hours old' }),
  accuracy_m: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 100_000 }))),
  speed_kmh: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 500 }))),
  heading: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 360, description: 'degrees clockwise from north' }))),
}, { title: 'PositionInput', additionalProperties: false })

export const ReportPositionsBody = Type.Object({
  positions: Type.Array(PositionInput, { minItems: 1, maxItems: MAX_POSITIONS_PER_CALL }),
}, { title: 'ReportPositionsBody', additionalProperties: false })
export type ReportPositionsBody = Static<typeof ReportPositionsBody>

export const PositionsAccepted = Type.Object({
  accepted: Type.Integer({ description: 'positions stored' }),
  received_at: Type.String({ description: 'the server\'s clock when they were received (a device may correct its own by it)' }),
}, { title: 'PositionsAccepted' })

export const DriverPositionsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'recorded at or after; default: an hour before `to`' })),
  to: Type.Optional(Type.String({ format: 'date-time', maxLength: 40, description: 'recorded at or before; default: now' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1000, description: 'the oldest this many of the range' })),
}, { title: 'DriverPositionsQuery', additionalProperties: false })
export type DriverPositionsQuery = Static<typeof DriverPositionsQuery>

export const DriverPosition = Type.Object({
  lat: Type.Number(),
  lng: Type.Number(),
  recorded_at: Type.String(),
  received_at: Type.String(),
  accuracy_m: Nullable(Type.Number()),
  speed_kmh: Nullable(Type.Number()),
  heading: Nullable(Type.Number()),
}, { title: 'DriverPosition' })

export const DriverPositionsPage = Type.Object({
  data: Type.Array(DriverPosition),
  meta: Type.Object({
    from: Type.String(),
    to: Type.String(),
    limit: Type.Integer(),
    /** More positions lie in the range after the last one listed: ask again from its `recorded_at`. */
    has_more: Type.Boolean(),
  }),
}, { title: 'DriverPositionsPage' })
