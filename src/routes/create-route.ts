import { CreateRouteBody, RouteEnvelope } from '../../schemas/api/routes.js'
import { errorResponses } from '../../schemas/api/common.js'
import type { AddressSnapshot } from '../../schemas/events/shipments.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { checkAddressInput, resolveAddress } from '../addresses/address-input.js'
import { tasksAdded } from './add-tasks.js'
import { evolve, initialState, nextRouteId, routeDeciderOf, unlimited, type RouteEvent, type RouteState } from './route.js'
import { append, factsFromRows, factsFromStreams, type TaskFacts } from './route-command.js'
import { activeDriver, orgVehicle, routeEnvelope } from './queries.js'

export interface CreateRoute {
  type: 'CreateRoute'
  data: {
    route_id: number
    organization_id: string
    shift_date: string
    name: string | null
    driver_id: string | null
    vehicle_id: string | null
    capacity: VehicleCapacity
    start_address: AddressSnapshot | null
    end_address: AddressSnapshot | null
    task_ulids: readonly string[]
    tasks: ReadonlyMap<string, TaskFacts>
    now: Date
  }
}

/** A draft route; with `task_ulids`, its tasks in the same write (checked as an add is). */
export function decide(command: CreateRoute, state: RouteState): RouteEvent[] {
  if (state.exists) throw new IllegalStateError('The route already exists.', 'route_exists')
  const d = command.data
  const created: RouteEvent = {
    type: 'RouteCreated',
    data: {
      route_id: d.route_id, organization_id: d.organization_id, name: d.name, shift_date: d.shift_date, driver_id: d.driver_id,
      vehicle_id: d.vehicle_id, capacity: d.capacity, start_address: d.start_address, end_address: d.end_address, created_at: d.now.toISOString(),
    },
  }
  if (!d.task_ulids.length) return [created]
  const after = evolve(state, created)
  return [created, ...tasksAdded(after, { route_id: d.route_id, organization_id: d.organization_id }, { ...d, position: null })]
}

export const decider = routeDeciderOf(decide)

/** A calendar date that exists (the schema's `date` format checks the shape). */
const realDate = (s: string) => { const t = Date.parse(`${s}T00:00:00Z`); return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === s }

/** Driver and vehicle of a body: active drivers and vehicles of the organization, else a 422 naming the field. */
export async function checkPeople(
  platform: Platform, orgId: string, body: { driver_id?: string | null | undefined; vehicle_id?: string | null | undefined }, bag: ErrorBag,
): Promise<{ capacity: VehicleCapacity | undefined }> {
  const [driver, vehicle] = await Promise.all([
    body.driver_id ? activeDriver(platform, orgId, body.driver_id) : undefined,
    body.vehicle_id ? orgVehicle(platform, orgId, body.vehicle_id) : undefined,
  ])
  if (body.driver_id && !driver) bag.add('driver_id', 'The selected driver id is not an active driver of your organization.')
  if (body.vehicle_id && !vehicle) bag.add('vehicle_id', 'The selected vehicle id is not a vehicle of your organization.')
  const n = (v: number | string | null) => (v === null ? null : Number(v))
  return {
    capacity: body.vehicle_id === undefined ? undefined
      : vehicle ? { grams: n(vehicle.capacity_grams), volume_cm3: n(vehicle.capacity_volume_cm3), packages: n(vehicle.capacity_packages) }
        : unlimited,
  }
}

export const createRouteRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes', {
    schema: {
      tags: ['routes'], summary: 'Create a draft route for a shift date, optionally with driver, vehicle and tasks',
      body: CreateRouteBody, response: { 201: RouteEnvelope, ...errorResponses },
    },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const body = req.body
    const bag = new ErrorBag()
    if (!realDate(body.shift_date)) bag.add('shift_date', 'The shift date is not a valid date.')
    const addressOf = async (field: 'start_address' | 'end_address') => {
      const raw = body[field]
      if (!raw) return null
      const mode = checkAddressInput(raw, field, bag)
      return mode ? resolveAddress(platform, org.id, raw as Record<string, unknown>, mode, field, bag) : null
    }
    const [{ capacity }, start, end] = await Promise.all([checkPeople(platform, org.id, body, bag), addressOf('start_address'), addressOf('end_address')])
    bag.throwIfAny()
    const ctx = commandContext(platform, req)
    const id = await nextRouteId(platform)
    const ulids = (body.task_ulids ?? []).map((u) => u.toUpperCase())
    for (let attempt = 1; ; attempt++) {
      // The rows first; when a task moved meanwhile (a conflict on its stream), its stream decides.
      const tasks = attempt === 1 ? await factsFromRows(platform, org.id, ulids) : await factsFromStreams(platform, org.id, ulids)
      const events = decide({
        type: 'CreateRoute',
        data: {
          route_id: id, organization_id: org.id, shift_date: body.shift_date, name: body.name?.trim() || null, driver_id: body.driver_id ?? null,
          vehicle_id: body.vehicle_id ?? null, capacity: capacity ?? unlimited, start_address: start, end_address: end, task_ulids: ulids, tasks, now: ctx.now,
        },
      }, initialState())
      try {
        await append(platform, id, 'no_stream', events, tasks, ctx)
        break
      } catch (err) {
        if (!(err instanceof ConcurrencyError) || attempt >= 5) throw err
      }
    }
    return reply.code(201).send(await routeEnvelope(platform, org.id, id))
  })
}
