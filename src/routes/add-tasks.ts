import { AddRouteTasksBody, MAX_ROUTE_TASKS, RouteEnvelope, RouteParams } from '../../schemas/api/routes.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import type { RouteTaskSnapshot } from '../../schemas/events/routes.js'
import { ErrorBag } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import { loadProfile, overflowMessage } from './capacity.js'
import { requireEditable, requireRoute, routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand, tasksChangeAnswer, type TaskFacts } from './route-command.js'

const FINAL = new Set(['complete', 'failed', 'cancelled'])

export interface AddRouteTasks {
  type: 'AddRouteTasks'
  data: {
    organization_id: string
    task_ulids: readonly string[]
    /** 1-based; null: at the end. */
    position: number | null
    tasks: ReadonlyMap<string, TaskFacts>
    now: Date
  }
}

/**
 * The tasks inserted before `position` (1-based, default the end), each checked (one 422 naming
 * every bad `task_ulids.N`): a task of the organization, named once, not final, on no route. Then
 * the capacity of the whole new sequence (DESIGN §3.9's loading rule). Shared with the creation.
 */
export function tasksAdded(state: RouteState, ids: { route_id: number; organization_id: string }, d: AddRouteTasks['data']): RouteEvent[] {
  const bag = new ErrorBag()
  const snapshots: RouteTaskSnapshot[] = []
  d.task_ulids.forEach((ulid, i) => {
    const field = `task_ulids.${i}`
    const f = d.tasks.get(ulid)
    if (d.task_ulids.indexOf(ulid) !== i) return bag.add(field, 'The task appears more than once.')
    if (!f || f.organizationId !== ids.organization_id) return bag.add(field, 'The selected task is not a task of your organization.')
    if (FINAL.has(f.status)) return bag.add(field, `The task is ${f.status}; a final task cannot be added to a route.`)
    if (f.routeId === ids.route_id || state.tasks.some((t) => t.ulid === ulid)) return bag.add(field, 'The task is already on this route.')
    if (f.routeId !== null) return bag.add(field, `The task is already on route ${f.routeId}; a task is on one route at most.`)
    snapshots.push({ ulid, type: f.type as RouteTaskSnapshot['type'], load: f.load, shipment_id: f.shipmentId, status: f.status })
  })
  const length = state.tasks.length
  if (d.position !== null && d.position > length + 1) bag.add('position', `The position may not be greater than ${length + 1}.`)
  if (length + d.task_ulids.length > MAX_ROUTE_TASKS) bag.add('task_ulids', `A route holds at most ${MAX_ROUTE_TASKS} tasks.`)
  bag.throwIfAny()
  if (!snapshots.length) return []
  const index = d.position === null ? length : d.position - 1
  const next = [...state.tasks]
  next.splice(index, 0, ...snapshots)
  const { overflow } = loadProfile(next, state.capacity)
  if (overflow) bag.add('task_ulids', overflowMessage(overflow))
  bag.throwIfAny()
  return [{ type: 'RouteTasksAdded', data: { ...ids, tasks: snapshots, index, added_at: d.now.toISOString() } }]
}

export function decide(command: AddRouteTasks, state: RouteState): RouteEvent[] {
  const ids = requireRoute(state, command.data.organization_id)
  requireEditable(state)
  return tasksAdded(state, ids, command.data)
}

export const decider = routeDeciderOf(decide)

export const addRouteTasksRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/routes/:id/tasks', {
    schema: {
      tags: ['routes'], summary: 'Add tasks to a route at a position (1-based; default the end), checking capacity',
      params: RouteParams, body: AddRouteTasksBody, response: { 200: RouteEnvelope, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    const ctx = commandContext(platform, req)
    const ulids = req.body.task_ulids.map((u) => u.toUpperCase())
    const result = await runRouteCommand(platform, ctx, {
      organizationId: org.id, routeId: req.params.id, taskUlids: [...new Set(ulids)],
      build: (tasks): AddRouteTasks => ({ type: 'AddRouteTasks', data: { organization_id: org.id, task_ulids: ulids, position: req.body.position ?? null, tasks, now: ctx.now } }),
      decide,
    })
    return tasksChangeAnswer(platform, org.id, req.params.id, result)
  })
}
