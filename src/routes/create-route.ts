import { CreateRouteBody, RouteEnvelope } from '../../schemas/api/routes.js'
import { errorResponses } from '../../schemas/api/common.js'
import { ConcurrencyError } from '../infrastructure/event-store/event-store.js'
import { ErrorBag } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import { appendDecided } from '../shared/command-handler.js'
import type { RoutesPlugin } from '../http/module.js'
import { checkAddressInput, resolveAddress } from '../addresses/address-input.js'
import { initialState, routeDeciderOf, unlimited, type RouteEvent, type RouteState, newRoute, type NewRoute } from './route.js'
import { routeAppends } from './route-command.js'
import { taskFactsFromRows, taskFactsFromStreams } from '../tasks/queries.js'
import { checkPeople, realDate } from './route-input.js'
import { nextRouteId } from './route-ids.js'
import { routeEnvelope } from './queries.js'

/** A draft route for a shift date, optionally with driver, vehicle and tasks (its id drawn before deciding). */
export interface CreateRoute { type: 'CreateRoute'; data: NewRoute }

/** The route, and with `task_ulids` its tasks in the same write (checked as an add is). */
export function decide(command: CreateRoute, state: RouteState): RouteEvent[] {
  return newRoute(command.data, state)
}

export const decider = routeDeciderOf(decide)

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
      return mode ? resolveAddress(platform, org.id, raw, mode, field, bag) : null
    }
    const [{ capacity }, start, end] = await Promise.all([checkPeople(platform, org.id, body, bag), addressOf('start_address'), addressOf('end_address')])
    bag.throwIfAny()
    const ctx = commandContext(platform, req)
    const id = await nextRouteId(platform)
    const ulids = (body.task_ulids ?? []).map((u) => u.toUpperCase())
    for (let attempt = 1; ; attempt++) {
      // The rows first; when a task moved meanwhile (a conflict on its stream), its stream decides.
      const tasks = attempt === 1 ? await taskFactsFromRows(platform.rm, org.id, ulids) : await taskFactsFromStreams(platform.store, org.id, ulids)
      const events = decide({
        type: 'CreateRoute',
        data: {
          route_id: id, organization_id: org.id, shift_date: body.shift_date, name: body.name?.trim() || null, driver_id: body.driver_id ?? null,
          vehicle_id: body.vehicle_id ?? null, capacity: capacity ?? unlimited, start_address: start, end_address: end, task_ulids: ulids, tasks, now: ctx.now,
        },
      }, initialState())
      try {
        await appendDecided(platform.commands, routeAppends(id, 'no_stream', events, tasks), ctx)
        break
      } catch (err) {
        if (!(err instanceof ConcurrencyError) || attempt >= 5) throw err
      }
    }
    return reply.code(201).send(await routeEnvelope(platform, org.id, id))
  })
}
