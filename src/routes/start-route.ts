import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import type { Platform } from '../platform.js'
import { routeDeciderOf, routeStream, underlyingStatus, type RouteEvent, type RouteState } from './route.js'

/**
 * "The route starts" (DESIGN §3.9): published → started when a task of it starts. No HTTP route:
 * the route-lifecycle consumer (src/processes/route-lifecycle.ts) sends it on task events.
 */
export interface StartRoute { type: 'StartRoute'; data: { task_ulid: string; now: Date } }

/** A no-op when it already happened (or the task is not on the route), so a redelivered event changes nothing. */
export function decide(command: StartRoute, state: RouteState): RouteEvent[] {
  if (!state.exists) return []
  if (underlyingStatus(state) !== 'published' || !state.tasks.some((t) => t.ulid === command.data.task_ulid)) return []
  const ids = { route_id: state.id!, organization_id: state.organizationId! }
  return [{ type: 'RouteStarted', data: { ...ids, task_ulid: command.data.task_ulid, started_at: command.data.now.toISOString() } }]
}

export const decider = routeDeciderOf(decide)

/**
 * Starts the route (published → started) because this task of it started. Decided on the route's
 * stream, not its rows: the reaction that calls it may run ahead of the read models.
 */
export async function startRoute(platform: Platform, ctx: CommandContext, routeId: number, taskUlid: string) {
  return handleCommand(platform.commands, routeStream(routeId), decider, { type: 'StartRoute', data: { task_ulid: taskUlid, now: ctx.now } }, ctx)
}
