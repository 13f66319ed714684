import type { Bus, BusLogger, Delivery, Subscription } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import type { Platform } from '../platform.js'
import { handleCommand } from '../shared/command-handler.js'
import { shipmentStream } from '../shipments/shipment.js'
import { decider as expireShipment } from '../shipments/expire-shipment.js'
import { handlerFromFirstStart } from './consumer-start.js'
import { idempotentWrites } from './idempotent-consumer.js'
import { eventOf } from './relay.js'
import { commandMessages, retry, send, type Reaction, type ReactionInput, type ReactionOutput, type RelayedEvent } from './reaction.js'
import { ReactionRunner } from './reaction-runner.js'
import { eventsOf, subjectsOf } from '../shared/event-subjects.js'
import { isEventOf } from '../../schemas/events/event-map.js'
import { idOf } from '../../schemas/events/streams.js'
import type { TimerChange, Timers } from './timers.js'

export const EXPIRE_SHIPMENT_SUBJECT = 'commands.shipment.expire'
export const EXPIRY_SCHEDULER_CONSUMER = 'shipment-expiry-scheduler'
export const EXPIRY_CONSUMER = 'shipment-expiry'

/** One timer per shipment: a redelivered ShipmentCreated finds it rather than scheduling another. */
export const expiryTimerId = (shipmentId: number): string => `expire-shipment-${shipmentId}`

/** ShipmentCreated schedules a shipment's timer; after the others it can no longer expire, so they cancel it. */
const SCHEDULING_EVENTS = eventsOf('shipment', 'ShipmentCreated', 'ShipmentReady', 'ShipmentCancelled', 'ShipmentExpired')
export const EXPIRY_SCHEDULER_SUBJECTS = subjectsOf('shipment', SCHEDULING_EVENTS)

export interface ExpireShipmentMessage { shipment_id: number; fire_at: string }

/**
 * The scheduler's decision, pure: a created shipment's timer fires at created_at + the expiry
 * hours; after any other of its events it can no longer expire, so the timer is cancelled.
 */
export function expiryTimerChange(e: RelayedEvent<typeof SCHEDULING_EVENTS>, expiryHours: number): TimerChange[] {
  const shipmentId = idOf.shipment(e.streamId)
  if (shipmentId === null) return []
  if (e.type !== 'ShipmentCreated') return [{ cancel: expiryTimerId(shipmentId) }]
  const fireAt = new Date(Date.parse(e.data.created_at) + expiryHours * 3_600_000)
  const data: ExpireShipmentMessage = { shipment_id: shipmentId, fire_at: fireAt.toISOString() }
  return [{ schedule: { id: expiryTimerId(shipmentId), fireAt, subject: EXPIRE_SHIPMENT_SUBJECT, data, key: e.streamId } }]
}

/** The shipment aggregate's ExpireShipment, at the clock of the firing (the expiry hours are the platform's setting). */
export type ExpiryCommand = { type: 'ExpireShipment'; data: { shipment_id: number; now: string } }

/**
 * The timer fires on the database's clock; a process clock a little behind would see it as early
 * and the aggregate would ignore it, so the message comes again once the difference is waited out.
 */
function decide({ message, now }: ReactionInput<ExpireShipmentMessage>): ReactionOutput<ExpiryCommand>[] {
  const early = Date.parse(message.fire_at) - now.getTime()
  if (early > 0) return [retry(early + 10, 'fired ahead of this process\'s clock')]
  return [send({ type: 'ExpireShipment', data: { shipment_id: message.shipment_id, now: now.toISOString() } })]
}

/** The pure part, for its given/when/then specs: it needs no state (the aggregate decides whether the shipment can still expire). */
export const expiryDecider = { decide, evolve: (state: null): null => state, initialState: (): null => null }

/**
 * The consumer of `commands.shipment.expire`: sends the aggregate's ExpireShipment, which appends
 * `ShipmentExpired` only if the shipment is still open and not ready, so a late, repeated or
 * uncancelled firing is harmless.
 */
export const shipmentExpiry: Reaction<ExpireShipmentMessage, null, Record<never, never>, ExpiryCommand> = {
  options: { name: EXPIRY_CONSUMER, subjects: [EXPIRE_SHIPMENT_SUBJECT] },
  source: commandMessages<ExpireShipmentMessage>(),
  history: {},
  load: () => null,
  ...expiryDecider,
  handlers: {
    async ExpireShipment(platform, { data }, ctx, logger) {
      await handleCommand(platform.commands, shipmentStream(data.shipment_id), expireShipment, {
        type: 'ExpireShipment', data: { now: data.now, expiry_hours: platform.config.shipmentExpiryHours },
      }, ctx)
      logger.info({ shipment_id: data.shipment_id }, 'shipment expiry command handled')
    },
  },
}

export interface ShipmentExpiryDeps {
  bus: Bus
  timers: Timers
  logger?: BusLogger
}

/**
 * Shipment expiry (DESIGN §3.5) on the bus timers:
 * - a consumer of ShipmentCreated schedules `expire-shipment-<id>` at created_at +
 *   SHIPMENT_EXPIRY_HOURS (publishing `commands.shipment.expire`), and cancels it when the shipment
 *   becomes ready, cancelled or expired; each in the transaction that marks the message processed;
 * - a consumer of `commands.shipment.expire` sends the aggregate's ExpireShipment, which appends
 *   `ShipmentExpired` only if the shipment is still open and not ready, so a late, repeated or
 *   uncancelled firing is harmless. That is also why the scheduler need not be an ordered consumer
 *   (serial on NATS): a cancel that overtakes its ShipmentCreated leaves a timer whose command is a no-op.
 */
export class ShipmentExpiry {
  private subscriptions: Subscription[] = []
  private readonly expiry: ReactionRunner<ExpireShipmentMessage, null, Record<never, never>, ExpiryCommand>

  constructor(private readonly platform: Platform, private readonly deps: ShipmentExpiryDeps) {
    this.expiry = new ReactionRunner(platform, deps.bus, shipmentExpiry, deps.logger ?? silentLogger)
  }

  async start(): Promise<void> {
    if (this.subscriptions.length) return
    const { bus, timers } = this.deps
    // A burst of events costs one statement for all of their timers, applied in the events' order
    // (a shipment created and made ready in the same batch keeps a cancelled timer).
    const schedule = idempotentWrites(this.platform.db, this.platform.database.sendStatements, async (deliveries) => {
      const statement = timers.changeStatement(deliveries.flatMap((d) => this.timerChangeOf(d)))
      return { statements: statement ? [statement] : [] }
    })
    // Shipments already in the log at its first start get no timer: expiring every old open
    // shipment at once is not this deployment's call (a replay can schedule them).
    this.subscriptions.push(await bus.subscribe({
      name: EXPIRY_SCHEDULER_CONSUMER,
      subjects: EXPIRY_SCHEDULER_SUBJECTS,
    }, await handlerFromFirstStart(this.platform.db, this.platform.store, EXPIRY_SCHEDULER_CONSUMER, schedule)))
    await this.expiry.start()
  }

  async stop(): Promise<void> {
    const subs = this.subscriptions
    this.subscriptions = []
    await Promise.all([...subs.map((s) => s.stop()), this.expiry.stop()])
  }

  private timerChangeOf(delivery: Delivery): TimerChange[] {
    const event = eventOf(delivery)
    return isEventOf(SCHEDULING_EVENTS, event) ? expiryTimerChange(event, this.platform.config.shipmentExpiryHours) : []
  }
}
