import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { NotFoundError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { foldRoute, routeDeciderOf, routeStream, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand } from './route-command.js'
import { taskStream } from '../tasks/task.js'
import { decide as decideRemove, type RemoveRouteTask } from './remove-task.js'
import { statusOfTaskEvents, TASK_STATUS_EVENTS } from './queries.js'

/**
 * Slices "the route starts" and "the route finishes" (DESIGN §3.9): no HTTP route, the
 * route-lifecycle consumer (src/processes/route-lifecycle.ts) calls them on task events. Both are
 * no-ops when they already happened, so a redelivered event changes nothing.
 */
export type LifecycleCommand =
  | { type: 'StartRoute'; data: { task_ulid: string; now: Date } }
  | { type: 'FinishRoute'; data: { /** Statuses of the route's tasks, by ulid. */ statuses: ReadonlyMap<string, string>; now: Date } }

const FINAL = new Set(['complete', 'failed', 'cancelled'])

/** What the route's status would be without a block (a block pauses the route, not its life cycle). */
const underlying = (s: RouteState) => (s.status === 'blocked' ? s.statusBeforeBlock ?? 'draft' : s.status)

export function decide(command: LifecycleCommand, state: RouteState): RouteEvent[] {
  if (!state.exists) return []
  const ids = { route_id: state.id!, organization_id: state.organizationId! }
  const at = command.data.now.toISOString()
  if (command.type === 'StartRoute') {
    if (underlying(state) !== 'published' || !state.tasks.some((t) => t.ulid === command.data.task_ulid)) return []
    return [{ type: 'RouteStarted', data: { ...ids, task_ulid: command.data.task_ulid, started_at: at } }]
  }
  const status = underlying(state)
  if (status !== 'started' || !state.tasks.length) return []
  if (!state.tasks.every((t) => FINAL.has(command.data.statuses.get(t.ulid) ?? ''))) return []
  return [{ type: 'RouteFinished', data: { ...ids, finished_at: at } }]
}

export const decider = routeDeciderOf(decide)

/**
 * Starts the route (published → started) because this task of it started. Decided on the route's
 * stream, not its rows: the reaction that calls it may run ahead of the read models.
 */
export async function startRoute(platform: Platform, ctx: CommandContext, routeId: number, taskUlid: string) {
  return handleCommand(platform.commands, routeStream(routeId), decider, { type: 'StartRoute', data: { task_ulid: taskUlid, now: ctx.now } }, ctx)
}

/**
 * Finishes the route when every task on it is final, decided from the streams (the route's, and its
 * tasks' status events in one read): the read models may lag the bus that called this.
 */
export async function finishRouteIfDone(platform: Platform, ctx: CommandContext, routeId: number) {
  const route = foldRoute(await platform.store.readStream(routeStream(routeId)))
  if (underlying(route) !== 'started' || !route.tasks.length) return { events: [] as RouteEvent[] }
  const streams = await platform.store.readStreams(route.tasks.map((t) => taskStream(t.ulid)), { types: TASK_STATUS_EVENTS })
  const statuses = new Map(route.tasks.map((t) => [t.ulid, statusOfTaskEvents(streams.get(taskStream(t.ulid)) ?? []) ?? 'pending']))
  if (![...statuses.values()].every((s) => FINAL.has(s))) return { events: [] as RouteEvent[] }
  // The route may have changed since it was read: the command reads it again and decides on that.
  return handleCommand(platform.commands, routeStream(routeId), decider, { type: 'FinishRoute', data: { statuses, now: ctx.now } }, ctx)
}

/**
 * Takes a task off whatever route it is on (the workflows module calls it when a workflow is
 * cancelled: its cancelled tasks leave their routes). False when it was on none.
 */
export async function unrouteTask(
  platform: Platform, ctx: CommandContext, organizationId: string, ulid: string, opts: { /** Only a task that ended cancelled. */ onlyCancelled?: boolean } = {},
): Promise<boolean> {
  const history = await platform.store.readStream(taskStream(ulid))
  if (opts.onlyCancelled && statusOfTaskEvents(history) !== 'cancelled') return false
  let routeId: number | null = null
  for (const e of history) {
    if (e.type === 'TaskRouted') routeId = (e.data as { route_id: number }).route_id
    else if (e.type === 'TaskUnrouted') routeId = null
  }
  if (routeId === null) return false
  try {
    await runRouteCommand(platform, ctx, {
      organizationId, routeId, taskUlids: [],
      build: (): RemoveRouteTask => ({ type: 'RemoveRouteTask', data: { organization_id: organizationId, task_ulid: ulid, now: ctx.now, force: true } }),
      decide: decideRemove,
    })
    return true
  } catch (err) {
    if (err instanceof NotFoundError) return false
    throw err
  }
}
