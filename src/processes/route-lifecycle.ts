import type { Bus, BusLogger, ConsumerOptions } from '../infrastructure/bus/bus.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import type { CommandContext } from '../shared/command-handler.js'
import { DomainError } from '../shared/errors.js'
import { startRoute } from '../routes/start-route.js'
import { finishRouteIfDone } from '../routes/finish-route.js'
import { foldRoute, routeIdOfStream, routeStream } from '../routes/route.js'
import { setShipmentStatusFromRoutes } from '../shipments/routes-status.js'
import { Reaction, reactionOptions } from './reaction.js'
import { idOf } from '../../schemas/events/streams.js'
import { TaskRouteMarkers } from '../../schemas/events/routes.js'
import { isEvent, isEventOf } from '../../schemas/events/event-map.js'
import { eventsOf, subjectsOf } from '../shared/event-subjects.js'

export const ROUTE_LIFECYCLE_CONSUMER = 'route-lifecycle'
/** A task's first step starts its route; its final ones may finish it. */
const TASK_STEPS = eventsOf('task', 'TaskStarted', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
const FINAL_STEPS = eventsOf('task', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
/** A route that starts, or loses a task, may be finished by then. */
const ROUTE_CHANGES = eventsOf('route', 'RouteStarted', 'RouteTaskRemoved')
export const ROUTE_LIFECYCLE_SUBJECTS = [...subjectsOf('task', TASK_STEPS), ...subjectsOf('route', ROUTE_CHANGES)]

export interface RouteLifecycleDeps { bus: Bus; logger?: BusLogger }

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
export class RouteLifecycle extends Reaction {
  static readonly options: ConsumerOptions = reactionOptions(ROUTE_LIFECYCLE_CONSUMER, ROUTE_LIFECYCLE_SUBJECTS, { ordered: true })

  constructor(platform: Platform, deps: RouteLifecycleDeps) {
    super(platform, deps.bus, RouteLifecycle.options, deps.logger)
  }

  protected async act(event: RecordedEvent): Promise<void> {
    if (!isEventOf(TASK_STEPS, event) && !isEventOf(ROUTE_CHANGES, event)) return
    if (!event.data.organization_id) return
    const routeId = routeIdOfStream(event.streamId) ?? await this.routeOfTask(event)
    if (routeId === null) return
    const ctx: CommandContext = {
      now: this.platform.clock(), actor: { kind: 'system', id: ROUTE_LIFECYCLE_CONSUMER },
      causationId: event.id, correlationId: event.metadata.correlation_id ?? event.id,
    }
    if (event.type === 'TaskStarted') {
      const { events } = await startRoute(this.platform, ctx, routeId, idOf.task(event.streamId)!)
      if (events.length) this.logger.info({ route_id: routeId }, 'route started')
      return
    }
    if (event.type === 'RouteStarted') await this.outForDelivery(event, routeId, ctx)
    if (isEventOf(FINAL_STEPS, event) || isEventOf(ROUTE_CHANGES, event)) {
      const { events } = await finishRouteIfDone(this.platform, ctx, routeId)
      if (events.length) this.logger.info({ route_id: routeId }, 'route finished')
    }
  }

  /** The route the task was on at this event: named by the event, or (older events) its stream's last marker before it. */
  private async routeOfTask(event: RecordedEvent): Promise<number | null> {
    if (idOf.task(event.streamId) === null || !isEventOf(TASK_STEPS, event)) return null
    const named = event.data.route_id
    if (named !== undefined) return named
    const history = (await this.platform.store.readStream(event.streamId)).filter((e) => e.streamVersion <= event.streamVersion)
    let routeId: number | null = null
    for (const e of history) {
      if (isEvent(TaskRouteMarkers, 'TaskRouted', e)) routeId = e.data.route_id
      else if (isEvent(TaskRouteMarkers, 'TaskUnrouted', e)) routeId = null
    }
    return routeId
  }

  /** DESIGN §3.9: the delivery task's route started → its shipment is `out_for_delivery`. */
  private async outForDelivery(event: RecordedEvent, routeId: number, ctx: CommandContext): Promise<void> {
    const state = foldRoute((await this.platform.store.readStream(routeStream(routeId))).filter((e) => e.streamVersion <= event.streamVersion))
    const shipments = new Set(state.tasks.filter((t) => t.type === 'delivery' && t.shipment_id !== null).map((t) => t.shipment_id!))
    for (const shipmentId of shipments) {
      try {
        await setShipmentStatusFromRoutes(this.platform, shipmentId, 'out_for_delivery', null, ctx, { key: `route:${routeId}:started:shipment:${shipmentId}` })
      } catch (err) {
        // Not a service_routes shipment, already final, cancelled…: the shipment's own rules say no.
        if (!(err instanceof DomainError)) throw err
        this.logger.info({ route_id: routeId, shipment_id: shipmentId, code: err.code }, 'route started: shipment status not set')
      }
    }
  }
}
