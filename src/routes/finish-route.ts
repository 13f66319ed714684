import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import type { Platform } from '../platform.js'
import { foldRoute, routeDeciderOf, routeStream, underlyingStatus, type RouteEvent, type RouteState } from './route.js'
import { taskStatusesFromStreams } from '../tasks/queries.js'

/**
 * "The route finishes" (DESIGN §3.9): started → finished when every task on it is final. No HTTP
 * route: the route-lifecycle consumer (src/processes/route-lifecycle.ts) sends it on task events.
 */
export interface FinishRoute { type: 'FinishRoute'; data: { /** Statuses of the route's tasks, by ulid. */ statuses: ReadonlyMap<string, string>; now: Date } }

const FINAL = new Set(['complete', 'failed', 'cancelled'])

/** A no-op unless started with every task final (a block does not stop it), so a redelivered event changes nothing. */
export function decide(command: FinishRoute, state: RouteState): RouteEvent[] {
  if (!state.exists) return []
  if (underlyingStatus(state) !== 'started' || !state.tasks.length) return []
  if (!state.tasks.every((t) => FINAL.has(command.data.statuses.get(t.ulid) ?? ''))) return []
  const ids = { route_id: state.id!, organization_id: state.organizationId! }
  return [{ type: 'RouteFinished', data: { ...ids, finished_at: command.data.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

/**
 * Finishes the route when every task on it is final, decided from the streams (the route's, and its
 * tasks' status events in one read): the read models may lag the bus that called this.
 */
export async function finishRouteIfDone(platform: Platform, ctx: CommandContext, routeId: number): Promise<{ events: RouteEvent[] }> {
  const route = foldRoute(await platform.store.readStream(routeStream(routeId)))
  if (underlyingStatus(route) !== 'started' || !route.tasks.length) return { events: [] }
  const statuses = await taskStatusesFromStreams(platform.store, route.tasks.map((t) => t.ulid))
  if (![...statuses.values()].every((s) => FINAL.has(s))) return { events: [] }
  // The route may have changed since it was read: the command reads it again and decides on that.
  return handleCommand(platform.commands, routeStream(routeId), decider, { type: 'FinishRoute', data: { statuses, now: ctx.now } }, ctx)
}
