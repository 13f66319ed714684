import { RouteEnvelope, RouteParams, UpdateRouteBody } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { RouteUpdated } from '../../schemas/events/routes.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import { ErrorBag, IllegalStateError, NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { loadProfile, overflowMessage, requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand } from './route-command.js'
import { findRouteRow, routeEnvelope } from './queries.js'
import { checkPeople } from './route-input.js'

export interface UpdateRoute {
  type: 'UpdateRoute'
  data: {
    organization_id: string
    name?: string | null | undefined
    driver_id?: string | null | undefined
    vehicle_id?: string | null | undefined
    /** The new vehicle's capacity (unlimited without one), with a vehicle change. */
    capacity?: VehicleCapacity | undefined
    now: Date
  }
}

/**
 * Records only what changes. A vehicle change re-checks the loading rule against the new capacity
 * (422 `task_ulids`); a published route keeps a driver (the one it shows to).
 */
export function decide(command: UpdateRoute, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  if (state.status === 'finished') throw new IllegalStateError('The route is finished; it cannot change.', 'route_finished')
  const d = command.data
  const changes: Omit<RouteUpdated, 'updated_at' | 'route_id' | 'organization_id'> = {}
  if (d.name !== undefined && (d.name?.trim() || null) !== state.name) changes.name = d.name?.trim() || null
  if (d.driver_id !== undefined && d.driver_id !== state.driverId) changes.driver_id = d.driver_id
  if (d.vehicle_id !== undefined && d.vehicle_id !== state.vehicleId) {
    changes.vehicle_id = d.vehicle_id
    changes.capacity = d.capacity!
  }
  const bag = new ErrorBag()
  if (changes.driver_id === null && state.status !== 'draft') bag.add('driver_id', 'A published route keeps a driver; assign another instead.')
  if (changes.capacity) {
    const { overflow } = loadProfile(state.tasks, changes.capacity)
    if (overflow) bag.add('task_ulids', overflowMessage(overflow))
  }
  bag.throwIfAny()
  if (Object.keys(changes).length === 0) return []
  return [{ type: 'RouteUpdated', data: { ...ids, ...changes, updated_at: d.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

export const updateRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.patch('/routes/:id', {
    schema: {
      tags: ['routes'], summary: 'Rename a route or change its driver or vehicle (a vehicle change re-checks capacity)',
      params: RouteParams, body: UpdateRouteBody, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const { id } = req.params
    if (!(await findRouteRow(platform.rm, { organizationId: org.id, driverId: null }, id))) throw new NotFoundError('Route')
    const bag = new ErrorBag()
    const { capacity } = await checkPeople(platform, org.id, req.body, bag)
    bag.throwIfAny()
    const ctx = commandContext(platform, req)
    await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: id, taskUlids: [],
      build: (): UpdateRoute => ({ type: 'UpdateRoute', data: { organization_id: org.id, ...req.body, capacity, now: ctx.now } }),
      decider,
    })
    return routeEnvelope(platform, org.id, id)
  })
}
