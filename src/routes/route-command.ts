import { ConcurrencyError, type ExpectedVersion } from '../infrastructure/event-store/event-store.js'
import { appendDecided, type CommandContext, type DecidedAppend } from '../shared/command-handler.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { evolve as evolveState, foldRoute, routeStream, taskMarkersOf, type RouteEvent, type RouteState, type TaskFacts } from './route.js'
import { findRouteRow, membersWithDetails, routeAfterChange, routeEnvelope, stateFromRows, statusOfTaskEvents, type RouteReads } from './queries.js'
import { stream } from '../../schemas/events/streams.js'
import { TaskRouteMarkers } from '../../schemas/events/routes.js'
import { TaskEvents } from '../../schemas/events/tasks.js'
import { isEvent } from '../../schemas/events/event-map.js'

/** A route command: built from the task facts it asked for, decided on the route's state. */
export interface RouteCommandSpec<C> {
  organizationId: string
  routeId: number
  /** Tasks whose facts the decision needs (upper-case ulids). */
  taskUlids: readonly string[]
  /** May look at the state (and read what the decision needs of it: the lifecycle reads its tasks' statuses). */
  build(facts: ReadonlyMap<string, TaskFacts>, state: RouteState): C | Promise<C>
  decide(command: C, state: RouteState): RouteEvent[]
}

export interface RouteCommandResult {
  events: RouteEvent[]
  state: RouteState
  /** Set when the fast path decided: what it read, to answer without reading the route again. */
  reads?: RouteReads
}

const MAX_ATTEMPTS = 12

export async function factsFromRows(platform: Platform, orgId: string, ulids: readonly string[]): Promise<Map<string, TaskFacts>> {
  if (!ulids.length) return new Map()
  const rows = await platform.rm.selectFrom('tasks')
    .select(['ulid', 'organization_id', 'type', 'status', 'route_id', 'stream_version', 'shipment_id', 'load_grams', 'load_volume_cm3', 'load_packages', 'address', 'time_windows'])
    .where('organization_id', '=', orgId).where('ulid', 'in', [...ulids]).execute()
  return new Map(rows.map((r) => [r.ulid, {
    ulid: r.ulid, organizationId: r.organization_id, type: r.type, status: r.status, version: r.stream_version,
    routeId: r.route_id == null ? null : Number(r.route_id), shipmentId: r.shipment_id == null ? null : Number(r.shipment_id),
    load: { grams: Number(r.load_grams), volume_cm3: Number(r.load_volume_cm3), packages: Number(r.load_packages) },
    details: { address: r.address, time_windows: r.time_windows },
  }]))
}

/** The facts of one task from its stream (the authority): creation, last status, last route marker. */
async function factsFromStream(platform: Platform, orgId: string, ulid: string): Promise<TaskFacts | undefined> {
  const history = await platform.store.readStream(stream.task(ulid))
  const created = isEvent(TaskEvents, 'TaskCreated', history[0]) ? history[0].data : undefined
  if (!created || created.organization_id !== orgId) return undefined
  let routeId: number | null = null
  for (const e of history) {
    if (isEvent(TaskRouteMarkers, 'TaskRouted', e)) routeId = e.data.route_id
    else if (e.type === 'TaskUnrouted') routeId = null
  }
  return {
    ulid, organizationId: orgId, type: created.type, load: created.load, shipmentId: created.shipment_id,
    status: statusOfTaskEvents(history) ?? 'pending', routeId, version: history.length,
  }
}

export async function factsFromStreams(platform: Platform, orgId: string, ulids: readonly string[]): Promise<Map<string, TaskFacts>> {
  const facts = new Map<string, TaskFacts>()
  await Promise.all(ulids.map(async (u) => {
    const f = await factsFromStream(platform, orgId, u)
    if (f) facts.set(u, f)
  }))
  return facts
}

/**
 * Runs a route command. The fast path decides on the read model (the route's row and membership,
 * the tasks' rows) and appends the route's events together with the task-stream markers in one
 * atomic write, expecting the route's and each added task's stream version from those rows: no
 * stream is replayed and no task is reloaded beyond the ones the request names. A conflict (a stale
 * row, or another process routing the same task) or a refusal on the rows sends the command to the
 * streams themselves, which decide the answer and the error; the task stream's expected version is
 * what leaves a task on one route at most when two processes add it to two routes at once.
 */
export async function runRouteCommand<C>(platform: Platform, ctx: CommandContext, spec: RouteCommandSpec<C>): Promise<RouteCommandResult> {
  // The three reads in parallel: one round trip of latency.
  const [row, members, facts] = await Promise.all([
    findRouteRow(platform.rm, { organizationId: spec.organizationId, driverId: null }, spec.routeId),
    membersWithDetails(platform.rm, spec.routeId),
    factsFromRows(platform, spec.organizationId, spec.taskUlids),
  ])
  if (row) {
    const state = stateFromRows(row, members)
    let events: RouteEvent[] | null = null
    const command = await spec.build(facts, state)
    try {
      events = spec.decide(command, state)
    } catch {
      // Refused on the rows: confirmed (or not) on the streams below.
    }
    if (events && events.length === 0) return { events, state }
    if (events) {
      try {
        await append(platform, spec.routeId, row.stream_version, events, facts, ctx)
        const details = new Map<string, { address: unknown; time_windows: unknown }>(members.map((m) => [m.task_ulid, m]))
        for (const f of facts.values()) if (f.details) details.set(f.ulid, f.details)
        const reads: RouteReads = { row, details, statuses: new Map(members.map((m) => [m.task_ulid, m.status])) }
        return { events, state: events.reduce((s, e) => evolveState(s, e), state), reads }
      } catch (err) {
        if (!(err instanceof ConcurrencyError)) throw err
      }
    }
  }
  for (let attempt = 1; ; attempt++) {
    const history = await platform.store.readStream(routeStream(spec.routeId))
    if (!history.length) throw new NotFoundError('Route')
    const state = foldRoute(history)
    const facts = await factsFromStreams(platform, spec.organizationId, spec.taskUlids)
    const events = spec.decide(await spec.build(facts, state), state)
    if (!events.length) return { events, state }
    try {
      await append(platform, spec.routeId, history.length, events, facts, ctx)
      return { events, state: events.reduce((s, e) => evolveState(s, e), state) }
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err
      if (attempt >= MAX_ATTEMPTS) throw new IllegalStateError('The route kept changing meanwhile; try again.', 'concurrency_conflict')
      // Many writers on one route: spread the retries so they do not collide again in step.
      await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt))
    }
  }
}

/** The route's events with the task streams' routing markers, in one atomic write (see routeAppends). */
export async function append(
  platform: Platform, routeId: number, routeVersion: ExpectedVersion, events: RouteEvent[], facts: ReadonlyMap<string, TaskFacts>, ctx: CommandContext,
): Promise<void> {
  await appendDecided(platform.commands, routeAppends(routeId, routeVersion, events, facts), ctx)
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
