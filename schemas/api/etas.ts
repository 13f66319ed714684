import { Type } from 'typebox'
import { Nullable } from './common.js'

// Live ETAs (DESIGN §3.10): a read model kept by the ETA engine (src/etas), shown on tasks and routes.

export const EtaBasis = Type.Union([Type.Literal('position'), Type.Literal('last_stop'), Type.Literal('plan')], {
  title: 'EtaBasis',
  description: '`position`: walked from the driver\'s fresh position; `last_stop`: from the last stop done (no position within 15 minutes); `plan`: from the route\'s start',
})

export const Eta = Type.Object({
  at: Type.String({ description: 'the predicted arrival (the task\'s `arrived`)' }),
  from: Type.String({ description: 'the uncertainty window: it widens with the stops ahead (docs/decisions.md)' }),
  to: Type.String(),
  basis: EtaBasis,
  computed_at: Type.String({ description: 'when this ETA was last restated (it is restated when it moves by a minute or more)' }),
}, { title: 'Eta', description: 'null when the task is not on a started route, is under way at its stop or done, or has no coordinates to drive to' })

export const NullableEta = Nullable(Eta)

export const DriverPositionSummary = Nullable(Type.Object({
  lat: Type.Number(),
  lng: Type.Number(),
  recorded_at: Type.String(),
}, { title: 'DriverPositionSummary', description: 'the driver\'s newest position; null when none in the last 15 minutes' }))
