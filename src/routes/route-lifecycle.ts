import type { CommandContext } from '../shared/command-handler.js'
import { NotFoundError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { routeDeciderOf, type RouteEvent, type RouteState } from './route.js'
import { runRouteCommand, factsFromStreams } from './route-command.js'
import { decide as decideRemove, type RemoveRouteTask } from './remove-task.js'
import { statusOfTaskEvents } from './queries.js'

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

/** Starts the route (published → started) because this task of it started. */
export async function startRoute(platform: Platform, ctx: CommandContext, organizationId: string, routeId: number, taskUlid: string) {
  return runRouteCommand(platform, ctx, {
    organizationId, routeId, taskUlids: [],
    build: (): LifecycleCommand => ({ type: 'StartRoute', data: { task_ulid: taskUlid, now: ctx.now } }),
    decide,
  })
}

/**
 * Finishes the route when every task on it is final. The statuses come from the tasks' streams
 * (the authority; the read model may lag the bus), read only once the route is started.
 */
export async function finishRouteIfDone(platform: Platform, ctx: CommandContext, organizationId: string, routeId: number) {
  return runRouteCommand(platform, ctx, {
    organizationId, routeId, taskUlids: [],
    build: async (_facts, state): Promise<LifecycleCommand> => {
      const statuses = underlying(state) === 'started' && await allFinalInReadModel(platform, routeId)
        ? await routeTaskStatuses(platform, organizationId, state.tasks.map((t) => t.ulid))
        : new Map<string, string>()
      return { type: 'FinishRoute', data: { statuses, now: ctx.now } }
    },
    decide,
  })
}

/** The read model's view (cheap): a task it still shows open means not yet; the caller waited for it to pass the event. */
async function allFinalInReadModel(platform: Platform, routeId: number): Promise<boolean> {
  const open = await platform.rm.selectFrom('route_tasks').select('task_ulid').where('route_id', '=', routeId)
    .where('status', 'not in', ['complete', 'failed', 'cancelled']).limit(1).executeTakeFirst()
  return open === undefined
}

async function routeTaskStatuses(platform: Platform, organizationId: string, ulids: string[]): Promise<Map<string, string>> {
  const facts = await factsFromStreams(platform, organizationId, ulids)
  return new Map([...facts].map(([u, f]) => [u, f.status]))
}

/**
 * Takes a task off whatever route it is on (the workflows module calls it when a workflow is
 * cancelled: its cancelled tasks leave their routes). False when it was on none.
 */
export async function unrouteTask(
  platform: Platform, ctx: CommandContext, organizationId: string, ulid: string, opts: { /** Only a task that ended cancelled. */ onlyCancelled?: boolean } = {},
): Promise<boolean> {
  const history = await platform.store.readStream(`task-${ulid}`)
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
