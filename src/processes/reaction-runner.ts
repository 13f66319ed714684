import type { Bus, BusLogger, Delivery, Handler, Subscription } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import type { CommandContext } from '../shared/command-handler.js'
import { isEventOf, type EventMap } from '../../schemas/events/event-map.js'
import { handlerFromFirstStart } from './consumer-start.js'
import type { CommandHandler, Reaction, ReactionCommand } from './reaction.js'
import { eventOf } from './relay.js'

/** A reaction as its process starts and stops it (carrier-processes.ts). */
export interface RunningReaction {
  start(): Promise<void>
  stop(): Promise<void>
  readonly handle: Handler
}

/**
 * Runs a declared reaction (reaction.ts) on the bus: takes the message, reads the stream its
 * decision needs, decides, and runs the commands decided, one after another in their order.
 *
 * It keeps no record of what it handled: each reaction's commands make a repeat a no-op by
 * themselves (an idempotency key, or a rule that refuses a second time), so a redelivered message
 * costs a repeat of reads and no writes, and a first delivery costs no bookkeeping at all. A
 * command that throws fails the delivery, which the bus retries (reactionOptions).
 */
export class ReactionRunner<Message, State, History extends EventMap, C extends ReactionCommand> implements RunningReaction {
  private subscription: Subscription | undefined
  protected readonly logger: BusLogger

  constructor(
    protected readonly platform: Platform, private readonly bus: Bus,
    readonly reaction: Reaction<Message, State, History, C>, logger?: BusLogger,
  ) {
    this.logger = logger ?? silentLogger
  }

  async start(): Promise<void> {
    if (this.subscription) return
    const { options, source } = this.reaction
    const handler = source.from === 'events' ? await handlerFromFirstStart(this.platform.db, this.platform.store, options.name, this.handle) : this.handle
    this.subscription = await this.bus.subscribe(options, handler)
  }

  async stop(): Promise<void> {
    const sub = this.subscription
    this.subscription = undefined
    await sub?.stop()
  }

  readonly handle: Handler = async (delivery: Delivery) => {
    const { reaction } = this
    const { source } = reaction
    let event: RecordedEvent | null = null
    let message: Message | null
    if (source.from === 'events') {
      event = eventOf(delivery)
      message = source.take(event)
    } else {
      message = source.take(delivery)
    }
    if (message === null) return
    const now = this.platform.clock()
    const state = await this.load(message)
    const ctx = this.contextOf(now, event)
    for (const output of reaction.decide({ message, now }, state)) {
      if (output.action === 'Retry') return delivery.nak(output.afterMs)
      if (output.action === 'Send') await this.run(output.message, ctx)
    }
  }

  /** The load step: the stream the decision names, up to its event, folded. */
  private async load(message: Message): Promise<State> {
    const { reaction } = this
    const read = reaction.load(message)
    let state = reaction.initialState()
    if (!read) return state
    for (const e of await this.platform.store.readStream(read.stream)) {
      if (read.through !== undefined && e.streamVersion > read.through) break
      if (isEventOf(reaction.history, e)) state = reaction.evolve(state, e)
    }
    return state
  }

  private contextOf(now: Date, cause: RecordedEvent | null): CommandContext {
    const actor = { kind: 'system' as const, id: this.reaction.options.name }
    if (!cause) return { now, actor }
    return { now, actor, causationId: cause.id, correlationId: cause.metadata.correlation_id ?? cause.id }
  }

  private async run(command: C, ctx: CommandContext): Promise<void> {
    // A handler per command type (CommandHandlers): the one of this command's type takes it.
    const handler = this.reaction.handlers[command.type as C['type']] as CommandHandler<C>
    await handler(this.platform, command, ctx, this.logger)
  }
}
