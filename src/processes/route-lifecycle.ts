import { DomainError } from '../shared/errors.js'
import { startRoute } from '../routes/start-route.js'
import { finishRouteIfDone } from '../routes/finish-route.js'
import { evolve as evolveRoute, initialState as initialRoute, routeIdOfStream, routeStream, type RouteState } from '../routes/route.js'
import { setShipmentStatusFromRoutes } from '../shipments/routes-status.js'
import {
  ignore, reactionOptions, relayedEvents, send, type Reaction, type ReactionInput, type ReactionOutput, type RelayedEvent, type StreamRead,
} from './reaction.js'
import { idOf } from '../../schemas/events/streams.js'
import { RouteEvents, TaskRouteMarkers } from '../../schemas/events/routes.js'
import { isEventOf, type EventOf } from '../../schemas/events/event-map.js'
import { eventsOf, subjectsOf } from '../shared/event-subjects.js'

export const ROUTE_LIFECYCLE_CONSUMER = 'route-lifecycle'
/** A task's first step starts its route; its final ones may finish it. */
const TASK_STEPS = eventsOf('task', 'TaskStarted', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
const FINAL_STEPS = eventsOf('task', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
/** A route that starts, or loses a task, may be finished by then. */
const ROUTE_CHANGES = eventsOf('route', 'RouteStarted', 'RouteTaskRemoved')
export const ROUTE_LIFECYCLE_SUBJECTS = [...subjectsOf('task', TASK_STEPS), ...subjectsOf('route', ROUTE_CHANGES)]

const INPUTS = { ...TASK_STEPS, ...ROUTE_CHANGES }
export type RouteLifecycleInput = RelayedEvent<typeof INPUTS>

/** What the decision may read: a task's route markers (its stream), or the route itself (its stream). */
const HISTORY = { ...TaskRouteMarkers, ...RouteEvents }

export interface RouteLifecycleState {
  /** The route the task was on, by its stream's markers (for steps written before steps named it). */
  taskRoute: number | null
  /** The route as it was at the event: on RouteStarted, whose delivery shipments go out. */
  route: RouteState
}

/** The commands it sends, each run through the routes' or the shipments' own command path. */
export type RouteLifecycleCommand =
  | { type: 'StartRoute'; data: { route_id: number; task_ulid: string } }
  /** The route's rule finishes it only when every task on it is final (finishRouteIfDone reads them). */
  | { type: 'FinishRoute'; data: { route_id: number } }
  | { type: 'SetRoutesStatus'; data: { route_id: number; shipment_id: number; status: 'out_for_delivery'; key: string } }

/**
 * The route the event concerns: its own stream's, else the one the task's step names, else (steps
 * written before they named it) the one its markers left it on. Null: on no route.
 */
function routeOf(e: RouteLifecycleInput, state: RouteLifecycleState): number | null {
  const own = routeIdOfStream(e.streamId)
  if (own !== null) return own
  if (idOf.task(e.streamId) === null || !isEventOf(TASK_STEPS, e)) return null
  return e.data.route_id !== undefined ? e.data.route_id : state.taskRoute
}

/** Reads only what the decision needs: nothing for an event of no organization or a step that names its route. */
function load(e: RouteLifecycleInput): StreamRead | null {
  if (!e.data.organization_id) return null
  if (e.type === 'RouteStarted') {
    const routeId = routeIdOfStream(e.streamId)
    return routeId === null ? null : { stream: routeStream(routeId), through: e.streamVersion }
  }
  if (isEventOf(TASK_STEPS, e) && e.data.route_id === undefined && idOf.task(e.streamId) !== null) return { stream: e.streamId, through: e.streamVersion }
  return null
}

function evolve(state: RouteLifecycleState, e: EventOf<typeof HISTORY>): RouteLifecycleState {
  switch (e.type) {
    case 'TaskRouted': return { ...state, taskRoute: e.data.route_id }
    case 'TaskUnrouted': return { ...state, taskRoute: null }
    default: return { ...state, route: evolveRoute(state.route, e) }
  }
}

const initialState = (): RouteLifecycleState => ({ taskRoute: null, route: initialRoute() })

function decide({ message: e }: ReactionInput<RouteLifecycleInput>, state: RouteLifecycleState): ReactionOutput<RouteLifecycleCommand>[] {
  if (!e.data.organization_id) return [ignore('an event of no organization')]
  const routeId = routeOf(e, state)
  if (routeId === null) return [ignore('the task is on no route')]
  if (e.type === 'TaskStarted') return [send({ type: 'StartRoute', data: { route_id: routeId, task_ulid: idOf.task(e.streamId)! } })]
  const outputs: ReactionOutput<RouteLifecycleCommand>[] = []
  if (e.type === 'RouteStarted') {
    // DESIGN §3.9: the delivery task's route started → its shipment is `out_for_delivery`.
    const shipments = new Set(state.route.tasks.filter((t) => t.type === 'delivery' && t.shipment_id !== null).map((t) => t.shipment_id!))
    for (const shipmentId of shipments) {
      outputs.push(send({ type: 'SetRoutesStatus', data: { route_id: routeId, shipment_id: shipmentId, status: 'out_for_delivery', key: `route:${routeId}:started:shipment:${shipmentId}` } }))
    }
  }
  if (isEventOf(FINAL_STEPS, e) || isEventOf(ROUTE_CHANGES, e)) outputs.push(send({ type: 'FinishRoute', data: { route_id: routeId } }))
  return outputs
}

/** The pure part, for its given/when/then specs. */
export const decider = { decide, evolve, initialState }

/**
 * A route's life cycle (DESIGN §3.9), from the bus: published → started when a task on it starts,
 * → finished when every task on it is final (checked on each final task event, on a removal, and
 * when it starts). On RouteStarted, the delivery tasks linked to a shipment make that shipment
 * `out_for_delivery` (only a service_routes carrier's shipment takes it; any other refuses, and
 * that is nothing to do here).
 *
 * It acts on the event and the streams, never on a read model, which may lag the bus: a task's step
 * names the route the task was on (`route_id`; its stream up to the event for steps written before
 * that), so a task on no route costs nothing. A redelivery repeats no write: the route's rules
 * start and finish it once, and the shipment status carries an idempotency key per route and shipment.
 */
export const routeLifecycle: Reaction<RouteLifecycleInput, RouteLifecycleState, typeof HISTORY, RouteLifecycleCommand> = {
  options: reactionOptions(ROUTE_LIFECYCLE_CONSUMER, ROUTE_LIFECYCLE_SUBJECTS, { ordered: true }),
  source: relayedEvents(INPUTS),
  history: HISTORY,
  load,
  ...decider,
  handlers: {
    async StartRoute(platform, { data }, ctx, logger) {
      const { events } = await startRoute(platform, ctx, data.route_id, data.task_ulid)
      if (events.length) logger.info({ route_id: data.route_id }, 'route started')
    },
    async FinishRoute(platform, { data }, ctx, logger) {
      const { events } = await finishRouteIfDone(platform, ctx, data.route_id)
      if (events.length) logger.info({ route_id: data.route_id }, 'route finished')
    },
    async SetRoutesStatus(platform, { data }, ctx, logger) {
      try {
        await setShipmentStatusFromRoutes(platform, data.shipment_id, data.status, null, ctx, { key: data.key })
      } catch (err) {
        // Not a service_routes shipment, already final, cancelled…: the shipment's own rules say no.
        if (!(err instanceof DomainError)) throw err
        logger.info({ route_id: data.route_id, shipment_id: data.shipment_id, code: err.code }, 'route started: shipment status not set')
      }
    },
  },
}
