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
  window: Nullable(Type.Object({ from: Type.String(), to: Type.String() }, {
    title: 'EtaTimeWindow', description: 'the task\'s time window this ETA is measured against: the one it falls in or waits for, the last one when it is past them all',
  })),
  late: Type.Boolean({ description: 'the ETA lies a minute or more past the end of `window`' }),
  late_by_minutes: Nullable(Type.Integer({ minimum: 1, description: 'how far past the end of `window` the ETA lies, in whole minutes; null when on time or without a window' })),
  late_since: Nullable(Type.String({ description: 'since when the ETAs have been late (the first late one of this episode); null when on time' })),
}, { title: 'Eta', description: 'null when the task is not on a started route, is under way at its stop or done, or has no coordinates to drive to' })

export const NullableEta = Nullable(Eta)

export const DriverPositionSummary = Nullable(Type.Object({
  lat: Type.Number(),
  lng: Type.Number(),
  recorded_at: Type.String(),
  heading: Type.Optional(Nullable(Type.Number({ description: 'degrees clockwise from north, as the device reported it' }))),
}, { title: 'DriverPositionSummary', description: 'the driver\'s newest position; null when none in the last 15 minutes' }))
