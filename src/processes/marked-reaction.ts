import type { Bus, BusLogger, ConsumerOptions, Delivery, Handler, Subscription } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import { handlerFromFirstStart } from './consumer-start.js'
import { idempotent, wasProcessed } from './idempotent-consumer.js'
import { eventOf } from './relay.js'

/**
 * How the platform's reactions consume: ten deliveries with growing delays (about 2.5 minutes in
 * all) before a message is dead-lettered; `ordered` keeps publish order per stream.
 */
export const reactionOptions = (name: string, subjects: string[], opts: { ordered?: boolean } = {}): ConsumerOptions => ({
  name, subjects, ...(opts.ordered ? { ordered: true } : {}), maxDeliveries: 10, retryDelaysMs: [200, 1_000, 5_000, 30_000, 120_000],
})

/**
 * A reaction that runs commands for events and then marks the message processed: skipped when
 * already marked, else `act`, then the mark. The act runs outside the mark's transaction (its
 * commands write through their own connection, and PGlite has one), so a crash between the two
 * repeats the act: each reaction's commands must make a repeat a no-op (idempotency keys, or rules
 * that refuse a second time). Events in the log before its first start are skipped (consumer-start.ts).
 */
export abstract class MarkedReaction {
  private subscription: Subscription | undefined
  protected readonly logger: BusLogger
  private readonly mark: Handler

  constructor(protected readonly platform: Platform, protected readonly bus: Bus, private readonly options: ConsumerOptions, logger?: BusLogger) {
    this.logger = logger ?? silentLogger
    // Nothing to write but the mark itself.
    this.mark = idempotent(platform.db, async () => {}, { scope: options.name })
  }

  protected abstract act(event: RecordedEvent): Promise<void>

  async start(): Promise<void> {
    if (this.subscription) return
    this.subscription = await this.bus.subscribe(this.options, await handlerFromFirstStart(this.platform.db, this.platform.store, this.options.name, this.handle))
  }

  async stop(): Promise<void> {
    const sub = this.subscription
    this.subscription = undefined
    await sub?.stop()
  }

  /** One delivery: skipped when already handled, else the act, then the mark. */
  readonly handle: Handler = async (delivery: Delivery) => {
    if (await wasProcessed(this.platform.db, this.options.name, delivery.id)) return
    await this.act(eventOf(delivery))
    await this.mark(delivery)
  }
}
