import type { Bus, BusLogger, ConsumerOptions, Delivery, Handler, Subscription } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import { handlerFromFirstStart } from './consumer-start.js'
import { eventOf } from './relay.js'

/**
 * How the platform's reactions consume: ten deliveries with growing delays (about 2.5 minutes in
 * all) before a message is dead-lettered; `ordered` keeps publish order per stream.
 */
export const reactionOptions = (name: string, subjects: string[], opts: { ordered?: boolean } = {}): ConsumerOptions => ({
  name, subjects, ...(opts.ordered ? { ordered: true } : {}), maxDeliveries: 10, retryDelaysMs: [200, 1_000, 5_000, 30_000, 120_000],
})

/**
 * A reaction that runs commands for events. It keeps no record of what it handled: each reaction's
 * commands make a repeat a no-op by themselves (an idempotency key, or a rule that refuses a second
 * time), so a redelivered event costs a repeat of reads and no writes, and a first delivery costs no
 * bookkeeping at all. Events in the log before its first start are skipped (consumer-start.ts).
 */
export abstract class Reaction {
  private subscription: Subscription | undefined
  protected readonly logger: BusLogger

  constructor(protected readonly platform: Platform, protected readonly bus: Bus, private readonly options: ConsumerOptions, logger?: BusLogger) {
    this.logger = logger ?? silentLogger
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

  readonly handle: Handler = async (delivery: Delivery) => {
    await this.act(eventOf(delivery))
  }
}
