import type { Bus, BusLogger, Handler, Subscription } from '../infrastructure/bus/bus.js'
import { reactionOptions } from './reaction.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import type { Platform } from '../platform.js'
import { WebhookDispatcher, type DispatcherOptions } from '../notifications/dispatcher.js'
import { planNotifications } from '../notifications/outbox.js'
import { NOTIFIED_EVENTS } from '../notifications/notification-events.js'
import { planOrganizationWebhooks } from '../webhooks/enqueue.js'
import { SubscriptionsCache } from '../webhooks/subscriptions-cache.js'
import { isOrganizationEvent, ORGANIZATION_EVENT_SUBJECTS } from '../webhooks/organization-events.js'
import { handlerFromFirstStart } from './consumer-start.js'
import { idempotentWrites } from './idempotent-consumer.js'
import { eventOf } from './relay.js'
import { textOf } from '../infrastructure/event-store/payload.js'
import { familySubject } from '../shared/event-subjects.js'

export const NOTIFIER_CONSUMER = 'carrier-notifier'
export const NOTIFIER_SUBJECTS = [familySubject('shipment')]
/** The intake of organization webhooks (DESIGN §3.9): its own durable consumer, the same outbox and dispatcher. */
export const ORGANIZATION_WEBHOOKS_CONSUMER = 'organization-webhooks'
export const ORGANIZATION_WEBHOOKS_SUBJECTS = ORGANIZATION_EVENT_SUBJECTS

export interface NotifierDeps {
  bus: Bus
  logger?: BusLogger
}

/**
 * The notifier (DESIGN §1, §3.6), in two halves:
 * - intake: a durable bus consumer of the relayed shipment events that writes the outbox row of
 *   each webhook, once per (event, carrier): the message id goes into the processed-message table
 *   in the same transaction (idempotentBatch()), and the outbox's unique key catches a republished copy;
 * - delivery: the outbox dispatcher, which keeps the HTTP calls, their retry schedule
 *   (WEBHOOK_RETRY_DELAYS_MS), the delivery log and manual redelivery in the database.
 * Not an ordered consumer (on NATS that means one message at a time: about a third of the
 * throughput): a shipment's later events wait for its ShipmentCreated by themselves (nak above).
 * Events already in the log at its first start are not notified (consumer-start.ts).
 * Organization webhooks have a second intake consumer (task, workflow and route events), ordered
 * per subject, writing rows of target `webhook` into the same outbox; the one dispatcher sends both kinds.
 */
export class Notifier {
  readonly dispatcher: WebhookDispatcher
  private subscription: Subscription | undefined
  private organizationSubscription: Subscription | undefined
  private unsubscribeCache: (() => void) | undefined
  private readonly logger: BusLogger

  constructor(private readonly platform: Platform, private readonly deps: NotifierDeps, dispatcherOptions: DispatcherOptions = {}) {
    this.logger = deps.logger ?? silentLogger
    this.dispatcher = new WebhookDispatcher(platform, { logger: this.logger, ...dispatcherOptions })
  }

  async start(): Promise<void> {
    if (this.subscription) return
    this.dispatcher.start()
    // Deliveries whose notification row was written: the dispatcher is woken for those only (after
    // the commit; a batch that rolled back leaves at most a needless wake-up).
    const enqueued = new Set<string>()
    // A burst of events costs one look-up and one insert for all of them (idempotentBatch).
    // One round trip per batch for the marks and the outbox rows (idempotentWrites).
    const intake = idempotentWrites(this.platform.db, this.platform.database.sendStatements, async (deliveries, db) => {
      const plan = await planNotifications(db, deliveries.map(eventOf))
      // A later event overtook its ShipmentCreated (the consumer is not ordered): retry it after the
      // consumer's delay; one whose ShipmentCreated never comes ends as a dead letter, not dropped.
      plan.outcomes.forEach((outcome, i) => { if (outcome === 'unknown_shipment') deliveries[i]!.nak() })
      return {
        statements: plan.statement ? [plan.statement] : [],
        ran(rows) {
          plan.ran(rows[0] ?? [])
          plan.outcomes.forEach((outcome, i) => { if (outcome === 'created') enqueued.add(deliveries[i]!.id) })
        },
      }
    })
    const handler: Handler = async (delivery) => {
      const type = textOf(delivery.data, 'type') ?? ''
      if (!(type in NOTIFIED_EVENTS)) return
      try {
        await intake(delivery)
      } finally {
        if (enqueued.delete(delivery.id)) this.dispatcher.kick()
      }
    }
    this.subscription = await this.deps.bus.subscribe(reactionOptions(NOTIFIER_CONSUMER, NOTIFIER_SUBJECTS), await handlerFromFirstStart(this.platform.db, this.platform.store, NOTIFIER_CONSUMER, handler))
    this.organizationSubscription = await this.subscribeOrganizationWebhooks()
  }

  /** Organization events → outbox rows of their subscribed webhooks, once per (event, webhook). */
  private async subscribeOrganizationWebhooks(): Promise<Subscription> {
    const enqueued = new Set<string>()
    const subscriptions = new SubscriptionsCache()
    this.unsubscribeCache = await this.platform.changes.subscribe(subscriptions.subscriber)
    const intake = idempotentWrites(this.platform.db, this.platform.database.sendStatements, async (deliveries, db) => {
      const plan = await planOrganizationWebhooks(db, deliveries.map(eventOf), subscriptions)
      return {
        statements: plan.statement ? [plan.statement] : [],
        ran(rows) {
          plan.ran(rows[0] ?? [])
          for (const i of plan.created) enqueued.add(deliveries[i]!.id)
        },
      }
    })
    const handler: Handler = async (delivery) => {
      if (!isOrganizationEvent(eventOf(delivery))) return
      try {
        await intake(delivery)
      } finally {
        if (enqueued.delete(delivery.id)) this.dispatcher.kick()
      }
    }
    // Ordered: one subject's events (a task's) enter the outbox in their order even when one of them
    // fails and is retried, and the dispatcher sends a subject's rows in outbox order. Unordered, a
    // task.completed overtook the task.arrived of the same append whose intake had failed once.
    return this.deps.bus.subscribe(reactionOptions(ORGANIZATION_WEBHOOKS_CONSUMER, ORGANIZATION_WEBHOOKS_SUBJECTS, { ordered: true }), await handlerFromFirstStart(this.platform.db, this.platform.store, ORGANIZATION_WEBHOOKS_CONSUMER, handler))
  }

  async stop(): Promise<void> {
    const subs = [this.subscription, this.organizationSubscription]
    this.subscription = undefined
    this.organizationSubscription = undefined
    await Promise.all(subs.map((s) => s?.stop()))
    this.unsubscribeCache?.()
    await this.dispatcher.stop()
  }
}

