import { Type, type Static } from 'typebox'
import { Route } from './routes.js'

// Route planning API (DESIGN §3.9 "Planning"): optimize one route, plan a day over several vehicles.

/** Bounds of one planning request (docs/decisions.md "Route planning over HTTP"). */
export const MAX_PLAN_TASKS = 1000
export const MAX_PLAN_VEHICLES = 50

const Ulid = Type.String({ pattern: '^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$', description: 'a task ulid' })
const ForeignId = Type.String({ minLength: 1, maxLength: 64 })
const Objective = Type.Union([Type.Literal('distance'), Type.Literal('duration')], { title: 'PlanningObjective' })
const UnassignedReason = Type.Union([Type.Literal('time_window'), Type.Literal('capacity'), Type.Literal('shift'), Type.Literal('fleet'), Type.Literal('no_coordinates')], { title: 'UnassignedReason' })

export const OptimizeRouteBody = Type.Object({
  objective: Type.Optional(Objective),
}, { title: 'OptimizeRouteRequest', additionalProperties: false })
export type OptimizeRouteBody = Static<typeof OptimizeRouteBody>

export const PlanViolation = Type.Object({ task_ulid: Type.String(), reason: UnassignedReason }, { title: 'PlanViolation' })

export const OptimizeRouteResponse = Type.Object({
  success: Type.Boolean(),
  route: Route,
  plan: Type.Object({ distance_m: Type.Number(), duration_s: Type.Number(), violations: Type.Array(PlanViolation) }),
}, { title: 'OptimizeRouteResponse' })

export const PlanRoutesBody = Type.Object({
  shift_date: Type.String({ format: 'date', maxLength: 10, description: 'YYYY-MM-DD' }),
  task_ulids: Type.Array(Ulid, { minItems: 1, maxItems: MAX_PLAN_TASKS }),
  vehicle_ids: Type.Array(ForeignId, { minItems: 1, maxItems: MAX_PLAN_VEHICLES }),
  driver_ids: Type.Optional(Type.Array(ForeignId, { maxItems: MAX_PLAN_VEHICLES, description: 'driver i drives vehicle i' })),
  objective: Type.Optional(Objective),
}, { title: 'PlanRoutesRequest', additionalProperties: false })
export type PlanRoutesBody = Static<typeof PlanRoutesBody>

export const PlanRoutesResponse = Type.Object({
  success: Type.Boolean(),
  routes: Type.Array(Route),
  unassigned: Type.Array(PlanViolation),
  plan: Type.Object({ distance_m: Type.Number(), duration_s: Type.Number() }),
}, { title: 'PlanRoutesResponse' })
