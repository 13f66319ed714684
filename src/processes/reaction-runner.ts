import type { Bus, BusLogger, Delivery, Handler, Subscription } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import type { CommandContext } from '../shared/command-handler.js'
import { isEventOf, type EventMap } from '../../schemas/events/event-map.js'
import { handlerFromFirstStart } from './consumer-start.js'
import type { CommandHandler, Reaction, ReactionCommand, StreamRead } from './reaction.js'
import { eventOf } from './relay.js'

/** Rounds of the load step before it is taken for a loop (a workflow's takes three). */
const MAX_LOAD_ROUNDS = 8

/**
 * One handling at a time per stream in this process, in arrival order: two messages decided on
 * one stream (two outcomes of one workflow's tasks) would otherwise race for it, and the loser pays
 * a failed append and a second read. Other processes still race; the expected version settles that.
 */
class Turns {
  private readonly tails = new Map<string, Promise<unknown>>()
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve()
    const result = before.then(fn, fn)
    const tail = result.catch(() => undefined)
    this.tails.set(key, tail)
    void tail.then(() => { if (this.tails.get(key) === tail) this.tails.delete(key) })
    return result
  }
}

/** A reaction as its process starts and stops it (carrier-processes.ts). */
export interface RunningReaction {
  start(): Promise<void>
  stop(): Promise<void>
  readonly handle: Handler
}

/**
 * Runs a declared reaction (reaction.ts) on the bus: takes the message, reads the streams its
 * decision needs, decides, and runs the commands decided, one after another in their order.
 * Handlings whose first read is the same stream take turns in this process (Turns).
 *
 * It keeps no record of what it handled: each reaction's commands make a repeat a no-op by
 * themselves (an idempotency key, or a rule that refuses a second time), so a redelivered message
 * costs a repeat of reads and no writes, and a first delivery costs no bookkeeping at all. A
 * command that throws fails the delivery, which the bus retries (reactionOptions).
 */
export class ReactionRunner<Message, State, History extends EventMap, C extends ReactionCommand> implements RunningReaction {
  private subscription: Subscription | undefined
  protected readonly logger: BusLogger
  private readonly turns = new Turns()

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
    const { source } = this.reaction
    let event: RecordedEvent | null = null
    let message: Message | null
    if (source.from === 'events') {
      event = eventOf(delivery)
      message = source.take(event)
    } else {
      message = source.take(delivery)
    }
    if (message === null) return
    const first = this.reaction.load(message)
    const handling = () => this.decideAndRun(delivery, message, first, event)
    return first ? this.turns.run(first.stream, handling) : handling()
  }

  private async decideAndRun(delivery: Delivery, message: Message, first: StreamRead | null, event: RecordedEvent | null): Promise<void> {
    const { reaction } = this
    const now = this.platform.clock()
    const input = { message, now }
    const ctx = this.contextOf(now, event)
    let state: State | undefined
    let sending: C | null = null
    try {
      state = await this.load(message, first)
      for (const output of reaction.decide(input, state)) {
        if (output.action === 'Retry') return delivery.nak(output.afterMs)
        if (output.action === 'Send') {
          sending = output.message
          await this.run(output.message, ctx)
          sending = null
        }
      }
    } catch (error) {
      // The last delivery: what the reaction records of the failure, before the bus parks the message.
      if (state !== undefined && reaction.giveUp && delivery.attempt >= delivery.maxDeliveries) {
        const outputs = reaction.giveUp(input, state, { command: sending, error, attempts: delivery.attempt })
        for (const output of outputs) if (output.action === 'Send') await this.run(output.message, ctx).catch(() => {})
      }
      throw error
    }
  }

  /**
   * The load step: the stream the decision names, then the ones its `loadNext` names from what was
   * read, each read once (up to its `through`) and folded in the order named.
   */
  private async load(message: Message, first: StreamRead | null): Promise<State> {
    const { reaction } = this
    let state = reaction.initialState()
    const read = new Set<string>()
    const unread = (reads: readonly StreamRead[]) =>
      reads.filter((r, i) => !read.has(r.stream) && reads.findIndex((o) => o.stream === r.stream) === i)
    let next = first ? [first] : unread(reaction.loadNext?.(message, state) ?? [])
    for (let round = 1; next.length; round++) {
      if (round > MAX_LOAD_ROUNDS) throw new Error(`${reaction.options.name}: its load step keeps naming streams`)
      const histories = await Promise.all(next.map((r) => this.platform.store.readStream(r.stream)))
      next.forEach((r, i) => {
        read.add(r.stream)
        for (const e of histories[i]!) {
          if (r.through !== undefined && e.streamVersion > r.through) break
          if (isEventOf(reaction.history, e)) state = reaction.evolve(state, e)
        }
      })
      next = unread(reaction.loadNext?.(message, state) ?? [])
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
