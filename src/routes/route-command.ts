import type { ExpectedVersion } from '../shared/concurrency.js'
import { handleCommandFromRow, type CommandContext, type DecidedAppend } from '../shared/command-handler.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { routeStream, taskMarkersOf, type RouteEvent, type RouteState, type TaskFacts } from './route.js'
import { findRouteRow, membersWithDetails, routeAfterChange, routeEnvelope, stateFromRows, type RouteReads } from './queries.js'
import { taskFactsFromRows, taskFactsFromStreams } from '../tasks/queries.js'

/** A route command: built from the task facts it asked for, decided by the slice's decider on the route's state. */
export interface RouteCommandSpec<C> {
  organizationId: string
  routeId: number
  /** Tasks whose facts the decision needs (upper-case ulids). */
  taskUlids: readonly string[]
  /** May look at the state (and read what the decision needs of it: the lifecycle reads its tasks' statuses). */
  build(facts: ReadonlyMap<string, TaskFacts>, state: RouteState): C | Promise<C>
  decider: Decider<RouteState, C, RouteEvent>
}

export interface RouteCommandResult {
  events: RouteEvent[]
  state: RouteState
  /** Set when the fast path decided: what it read, to answer without reading the route again. */
  reads?: RouteReads
}

const MAX_ATTEMPTS = 12

/**
 * Runs a route command through the row fast path (`handleCommandFromRow`). The row state is the
 * read model's (the route's row and membership, the named tasks' rows), and the route's events go
 * together with the task-stream markers in one atomic write, expecting the route's and each added
 * task's stream version from those rows: no stream is replayed and no task is reloaded beyond the
 * ones the request names. A conflict (a stale row, or another process routing the same task) or a
 * refusal on the rows sends the command to the streams themselves (the route's folded, the named
 * tasks' read), which decide the answer and the error; the task stream's expected version is what
 * leaves a task on one route at most when two processes add it to two routes at once.
 */
export async function runRouteCommand<C>(platform: Platform, ctx: CommandContext, spec: RouteCommandSpec<C>): Promise<RouteCommandResult> {
  // The three reads in parallel: one round trip of latency.
  const [row, members, rowFacts] = await Promise.all([
    findRouteRow(platform.rm, { organizationId: spec.organizationId, driverId: null }, spec.routeId),
    membersWithDetails(platform.rm, spec.routeId),
    taskFactsFromRows(platform.rm, spec.organizationId, spec.taskUlids),
  ])
  // The facts the command was built from, which its markers expect the versions of.
  let facts = rowFacts
  const result = await handleCommandFromRow(platform.commands, {
    streamId: routeStream(spec.routeId),
    decider: spec.decider,
    row: row && { state: stateFromRows(row, members), version: row.stream_version },
    command: async (state, from) => {
      if (from === 'stream') {
        if (!state.exists) throw new NotFoundError('Route')
        facts = await taskFactsFromStreams(platform.store, spec.organizationId, spec.taskUlids)
      }
      return spec.build(facts, state)
    },
    appends: (events, expected) => routeAppends(spec.routeId, expected, events, facts),
  }, ctx, {
    maxAttempts: MAX_ATTEMPTS,
    // Many writers on one route: spread the retries so they do not collide again in step.
    pauseMs: (attempt) => Math.random() * 5 * attempt,
    exhausted: () => new IllegalStateError('The route kept changing meanwhile; try again.', 'concurrency_conflict'),
  })
  const { events, state } = result
  if (result.from === 'stream' || !row || !events.length) return { events, state }
  const details = new Map<string, { address: unknown; time_windows: unknown }>(members.map((m) => [m.task_ulid, m]))
  for (const f of facts.values()) if (f.details) details.set(f.ulid, f.details)
  return { events, state, reads: { row, details, statuses: new Map(members.map((m) => [m.task_ulid, m.status])) } }
}

/** A route's events and, for each task they route or unroute, its marker in the task's stream. */
export function routeAppends(routeId: number, routeVersion: ExpectedVersion, events: RouteEvent[], facts: ReadonlyMap<string, TaskFacts>): DecidedAppend[] {
  const appends: DecidedAppend[] = [{ streamId: routeStream(routeId), events, expected: routeVersion }]
  for (const { stream, marker } of taskMarkersOf(events)) {
    // Routing guards the task's version (one route at most); unrouting is guarded by the route's own version.
    const expected = marker.type === 'TaskRouted' ? facts.get(marker.data.ulid)!.version : 'any'
    appends.push({ streamId: stream, events: [marker], expected })
  }
  return appends
}

/**
 * `{success, route}` after a change of the route's tasks: from what the fast path read and the
 * state it decided (no second read of 300 tasks), else read back from the read model.
 */
export async function tasksChangeAnswer(platform: Platform, orgId: string, routeId: number, result: RouteCommandResult) {
  const last = result.events.at(-1)
  const at = last?.type === 'RouteTasksAdded' ? last.data.added_at
    : last?.type === 'RouteTaskRemoved' ? last.data.removed_at
      : last?.type === 'RouteTasksReordered' ? last.data.reordered_at : undefined
  if (result.reads && at) return { success: true, route: await routeAfterChange(platform.rm, result.reads, result.state, at) }
  return routeEnvelope(platform, orgId, routeId)
}
