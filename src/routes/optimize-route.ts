import { OptimizeRouteBody, OptimizeRouteResponse } from '../../schemas/api/planning.js'
import { RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { ErrorBag, IllegalStateError, NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { planTasks, type PlanningVehicle } from '../planning/plan-tasks.js'
import type { UnassignedReason } from '../planning/model.js'
import { runRouteCommand } from './route-command.js'
import { requireEditable, requireRoute, routeDeciderOf, type RouteEvent, type RouteState, tasksReordered } from './route.js'
import { capacityOfRow, findRouteRow, routeEnvelope, routeTaskRows } from './queries.js'
import { capacityVector, planningRows, planningTasksOf, pointOf, shiftWindow, solverBudget } from './planning-input.js'

/** A route's tasks that are under way or done keep their place (first, in their order): only pending ones move. */
const OPEN = 'pending'

/** The route's tasks in the order the solver found (fixed ones first): recorded as a reorder. */
export interface OptimizeRoute { type: 'OptimizeRoute'; data: { organization_id: string; task_ulids: readonly string[]; now: Date } }

/** A reorder of an editable route: the same set of tasks, within capacity (a finished or blocked route is refused). */
export function decide(command: OptimizeRoute, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  requireEditable(state)
  return tasksReordered(state, ids, command.data.task_ulids, command.data.now)
}

export const decider = routeDeciderOf(decide)

export const optimizeRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/:id/optimize', {
    schema: {
      tags: ['routes'], summary: 'Reorder the route\'s open tasks for the least driving (time windows, durations, capacity, pickup before delivery)',
      params: RouteParams, body: OptimizeRouteBody, response: { 200: OptimizeRouteResponse, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const routeId = req.params.id
    const [row, members] = await Promise.all([
      findRouteRow(platform.rm, { organizationId: org.id, driverId: null }, routeId), routeTaskRows(platform.rm, routeId),
    ])
    if (!row) throw new NotFoundError('Route')
    // A finished or blocked route is refused by the reorder's own decision below.
    const seen = members.map((m) => m.task_ulid)
    const fixed = members.filter((m) => m.status !== OPEN).map((m) => m.task_ulid)
    const open = members.filter((m) => m.status === OPEN).map((m) => m.task_ulid)
    const rows = await planningRows(platform, org.id, seen)
    const byUlid = new Map(rows.map((r) => [r.ulid, r]))
    const bag = new ErrorBag()
    members.forEach((m, i) => {
      if (m.status === OPEN && !pointOf(byUlid.get(m.task_ulid)?.address)) {
        bag.add(`tasks.${i}`, `The task ${m.task_ulid} has no coordinates to drive to (none, or only its state's or country's centre: geo_precision state/country); it cannot be planned.`)
      }
    })
    bag.throwIfAny()

    const startAddress = pointOf(row.start_address)
    const endAddress = pointOf(row.end_address)
    // On a started route the van goes on from its last task under way or done.
    const lastFixed = fixed.length ? pointOf(byUlid.get(fixed[fixed.length - 1]!)?.address) : undefined
    const start = lastFixed ?? startAddress
    const vehicle: PlanningVehicle = {
      id: 'route', capacity: capacityVector(capacityOfRow(row)), shift: shiftWindow(row.shift_date),
      ...(start ? { start } : {}), ...(endAddress ? { end: endAddress } : {}),
    }
    let order = open
    let violations: { task_ulid: string; reason: UnassignedReason }[] = []
    let distance = 0
    let duration = 0
    if (open.length) {
      const plan = planTasks({
        ...planningTasksOf(open.map((u) => byUlid.get(u)!)), vehicles: [vehicle],
        speedKmh: platform.config.routingSpeedKmh, seed: 1, objective: req.body?.objective ?? 'duration', ...solverBudget(open.length),
      })
      const placed = plan.routes.flatMap((r) => r.stops.map((s) => s.task_id))
      // Nothing is dropped: what the solver could not place keeps its relative order after the rest.
      const left = new Set(plan.unassigned.map((u) => u.task_id))
      order = [...placed, ...open.filter((u) => left.has(u))]
      violations = plan.unassigned.map((u) => ({ task_ulid: u.task_id, reason: u.reason }))
      distance = plan.distance_m
      duration = plan.duration_s
    }
    const ulids = [...fixed, ...order]
    const ctx = commandContext(platform, req)
    await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId, taskUlids: [],
      build: (_facts, state): OptimizeRoute => {
        // Planned on what the route was: another change to its tasks meanwhile is a conflict, never overwritten.
        if (state.tasks.length !== seen.length || state.tasks.some((t, i) => t.ulid !== seen[i])) {
          throw new IllegalStateError('The route\'s tasks changed while it was being optimized; try again.', 'concurrency_conflict')
        }
        return { type: 'OptimizeRoute', data: { organization_id: org.id, task_ulids: ulids, now: ctx.now } }
      },
      decider,
    })
    return { ...(await routeEnvelope(platform, org.id, routeId)), plan: { distance_m: distance, duration_s: duration, violations } }
  })
}
