import { PlanRoutesBody, PlanRoutesResponse } from '../../schemas/api/planning.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import { appendDecided, type DecidedAppend } from '../shared/command-handler.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { planTasks, type PlanningVehicle } from '../planning/plan-tasks.js'
import { initialState, routeDeciderOf, type RouteEvent, type RouteState, newRoute, type NewRoute } from './route.js'
import { realDate } from './route-input.js'
import { nextRouteId } from './route-ids.js'
import { routeAppends } from './route-command.js'
import { taskFactsFromRows } from '../tasks/queries.js'
import { activeDriver, routeEnvelope } from './queries.js'
import { capacityVector, planningRows, planningTasksOf, pointOf, shiftWindow, solverBudget } from './planning-input.js'

const FINAL = new Set(['complete', 'failed', 'cancelled'])
/** One route of a day's plan: a draft route with the tasks the solver gave its vehicle, in order. */
export interface PlanRoute { type: 'PlanRoute'; data: NewRoute }

/** Decided as a creation is (its tasks checked as an add is); every route of the plan goes in one write. */
export function decide(command: PlanRoute, state: RouteState): RouteEvent[] {
  return newRoute(command.data, state)
}

export const decider = routeDeciderOf(decide)

export const planRoutesRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/plan', {
    schema: {
      tags: ['routes'], summary: 'Plan a day: split tasks over vehicles into draft routes (time windows, durations, capacity), reporting what could not be placed',
      body: PlanRoutesBody, response: { 201: PlanRoutesResponse, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const body = req.body
    const bag = new ErrorBag()
    if (!realDate(body.shift_date)) bag.add('shift_date', 'The shift date is not a valid date.')
    const ulids = body.task_ulids.map((u) => u.toUpperCase())
    const driverIds = body.driver_ids ?? []
    if (driverIds.length > body.vehicle_ids.length) bag.add('driver_ids', 'Give at most one driver per vehicle (driver i drives vehicle i).')
    const [rows, vehicles, drivers] = await Promise.all([
      planningRows(platform, org.id, ulids),
      platform.rm.selectFrom('vehicles').select(['id', 'name', 'capacity_grams', 'capacity_volume_cm3', 'capacity_packages'])
        .where('organization_id', '=', org.id).where('id', 'in', body.vehicle_ids).execute(),
      Promise.all(driverIds.map((d) => activeDriver(platform.rm, org.id, d))),
    ])
    const byUlid = new Map(rows.map((r) => [r.ulid, r]))
    ulids.forEach((u, i) => {
      const field = `task_ulids.${i}`
      const r = byUlid.get(u)
      if (ulids.indexOf(u) !== i) bag.add(field, 'The task appears more than once.')
      else if (!r) bag.add(field, 'The selected task is not a task of your organization.')
      else if (FINAL.has(r.status)) bag.add(field, `The task is ${r.status}; a final task cannot be planned.`)
      else if (r.route_id != null) bag.add(field, `The task is already on route ${r.route_id}; remove it from that route first.`)
    })
    const vehicleById = new Map(vehicles.map((v) => [v.id, v]))
    body.vehicle_ids.forEach((v, i) => {
      if (body.vehicle_ids.indexOf(v) !== i) bag.add(`vehicle_ids.${i}`, 'The vehicle appears more than once.')
      else if (!vehicleById.has(v)) bag.add(`vehicle_ids.${i}`, 'The selected vehicle id is not a vehicle of your organization.')
    })
    driverIds.forEach((d, i) => {
      if (driverIds.indexOf(d) !== i) bag.add(`driver_ids.${i}`, 'The driver appears more than once.')
      else if (!drivers[i]) bag.add(`driver_ids.${i}`, 'The selected driver id is not an active driver of your organization.')
    })
    bag.throwIfAny()

    const n = (v: number | string | null) => (v === null ? null : Number(v))
    const capacities = body.vehicle_ids.map((id): VehicleCapacity => {
      const v = vehicleById.get(id)!
      return { grams: n(v.capacity_grams), volume_cm3: n(v.capacity_volume_cm3), packages: n(v.capacity_packages) }
    })
    const shift = shiftWindow(body.shift_date)
    const planningVehicles: PlanningVehicle[] = body.vehicle_ids.map((id, i) => ({ id, capacity: capacityVector(capacities[i]!), shift }))
    // A task without a place to drive to is left out and reported (DESIGN §3.10), not refused: the rest of the day can still be planned.
    const placeless = ulids.filter((u) => !pointOf(byUlid.get(u)!.address))
    const plannable = ulids.filter((u) => pointOf(byUlid.get(u)!.address))
    const plan = plannable.length === 0 ? { routes: [], unassigned: [], distance_m: 0, duration_s: 0 } : planTasks({
      ...planningTasksOf(plannable.map((u) => byUlid.get(u)!)), vehicles: planningVehicles,
      speedKmh: platform.config.routingSpeedKmh, seed: 1, objective: body.objective ?? 'duration', ...solverBudget(plannable.length),
    })

    // Every route of the plan in one atomic write: all of them or none (a task routed meanwhile is a conflict).
    const ctx = commandContext(platform, req)
    const used = plan.routes.filter((r) => r.stops.length > 0)
    const facts = await taskFactsFromRows(platform.rm, org.id, ulids)
    const ids: number[] = []
    const appends: DecidedAppend[] = []
    for (const planned of used) {
      const i = body.vehicle_ids.indexOf(planned.vehicle_id)
      const id = await nextRouteId(platform)
      ids.push(id)
      const events = decide({
        type: 'PlanRoute',
        data: {
          route_id: id, organization_id: org.id, shift_date: body.shift_date, name: vehicleById.get(planned.vehicle_id)!.name ?? null,
          driver_id: driverIds[i] ?? null, vehicle_id: planned.vehicle_id, capacity: capacities[i]!, start_address: null, end_address: null,
          task_ulids: planned.stops.map((s) => s.task_id), tasks: facts, now: ctx.now,
        },
      }, initialState())
      appends.push(...routeAppends(id, 'no_stream', events, facts))
    }
    if (appends.length) {
      try {
        await appendDecided(platform.commands, appends, ctx)
      } catch (err) {
        if (err instanceof ConcurrencyError) throw new IllegalStateError('A task changed while the routes were being planned; try again.', 'concurrency_conflict')
        throw err
      }
    }
    const routes = await Promise.all(ids.map(async (id) => (await routeEnvelope(platform, org.id, id)).route))
    return reply.code(201).send({
      success: true, routes,
      unassigned: [
        ...placeless.map((u) => ({ task_ulid: u, reason: 'no_coordinates' as const })),
        ...plan.unassigned.map((u) => ({ task_ulid: u.task_id, reason: u.reason })),
      ],
      plan: { distance_m: plan.distance_m, duration_s: plan.duration_s },
    })
  })
}
