import type { BusLogger, ConsumerOptions, Delivery } from '../infrastructure/bus/bus.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import type { CommandContext } from '../shared/command-handler.js'
import { isEventOf, type EventMap, type EventOf } from '../../schemas/events/event-map.js'

/**
 * How the platform's reactions consume: ten deliveries with growing delays (about 2.5 minutes in
 * all) before a message is dead-lettered; `ordered` keeps publish order per stream.
 */
export const reactionOptions = (name: string, subjects: string[], opts: { ordered?: boolean } = {}): ConsumerOptions => ({
  name, subjects, ...(opts.ordered ? { ordered: true } : {}), maxDeliveries: 10, retryDelaysMs: [200, 1_000, 5_000, 30_000, 120_000],
})

/** A relayed event of a map, as a reaction decides on it: typed by its map, with where it stands in its stream. */
export type RelayedEvent<M extends EventMap> = Pick<RecordedEvent, 'id' | 'streamId' | 'streamVersion'> & EventOf<M>
/** A relayed event with the time it was stored: the same on every redelivery (what an id derived from it needs). */
export type StoredEvent<M extends EventMap> = RelayedEvent<M> & Pick<RecordedEvent, 'recordedAt'>

/** What a reaction decides on: its message and the clock when it came (a decision reads no clock of its own). */
export interface ReactionInput<Message> { message: Message; now: Date }

/** A command a reaction sends, carried out by the reaction's handler of that name. */
export interface ReactionCommand<Type extends string = string, Data = unknown> { type: Type; data: Data }

/**
 * What a decision asks for: Emmett's `WorkflowOutput`, the ones reactions use here, plus `Retry`:
 * a message that came too early (a timer fired on another clock) comes again later.
 */
export type ReactionOutput<C extends ReactionCommand> =
  | { action: 'Send'; message: C }
  | { action: 'Ignore'; reason: string }
  | { action: 'Retry'; afterMs: number; reason: string }

export const send = <C extends ReactionCommand>(message: C): ReactionOutput<C> => ({ action: 'Send', message })
export const ignore = <C extends ReactionCommand>(reason: string): ReactionOutput<C> => ({ action: 'Ignore', reason })
export const retry = <C extends ReactionCommand>(afterMs: number, reason: string): ReactionOutput<C> => ({ action: 'Retry', afterMs, reason })

/**
 * A reaction's pure part, shaped as Emmett's `Workflow`: `decide` turns an input and the state
 * loaded for it into outputs; `evolve` folds the history its load step names into that state. No
 * I/O: the clock arrives in the input, the history from the runner.
 */
export interface ReactionDecider<Message, State, History extends EventMap, C extends ReactionCommand> {
  decide(input: ReactionInput<Message>, state: State): ReactionOutput<C>[]
  evolve(state: State, event: EventOf<History>): State
  initialState(): State
}

/** A stream a decision needs, read up to version `through` when given (the state as it was at the event handled). */
export interface StreamRead { stream: string; through?: number }

/**
 * Why the last delivery of a message failed: the command that threw (null: the load or the decision
 * did), the error, and how many deliveries were tried.
 */
export interface ReactionFailure<C extends ReactionCommand> { command: C | null; error: unknown; attempts: number }

/**
 * Where a reaction's messages come from: relayed events, those of its maps (events in the log
 * before its first start are skipped, consumer-start.ts), or a command subject's messages.
 */
export type ReactionSource<Message> =
  | { from: 'events'; take(event: RecordedEvent): Message | null }
  | { from: 'commands'; take(delivery: Delivery): Message }

/** The relayed events of `map`; any other event on the reaction's subjects is none of its business. */
export const relayedEvents = <M extends EventMap>(map: M): ReactionSource<StoredEvent<M>> =>
  ({ from: 'events', take: (e) => (isEventOf(map, e) ? e : null) })

/** A command subject's messages, as the timer that publishes them shapes them. */
export const commandMessages = <Message>(): ReactionSource<Message> =>
  ({ from: 'commands', take: (d) => d.data as Message })

/**
 * How a command is carried out: through its slice's own command path, so a repeat is a no-op by
 * the slice's rules or its idempotency key. `ctx` is the runner's: the system actor named for the
 * reaction, the clock of the input, and for an event, the event as cause.
 */
export type CommandHandler<C> = (platform: Platform, command: C, ctx: CommandContext, logger: BusLogger) => Promise<void>
export type CommandHandlers<C extends ReactionCommand> = { [T in C['type']]: CommandHandler<Extract<C, { type: T }>> }

/**
 * A reaction, declared: what it consumes, the stream its decision needs (`load`, read by the
 * runner and folded by `evolve`; never a read model, which may lag the bus), its decision, and how
 * each command it sends is run. reaction-runner.ts runs every one of them.
 */
export interface Reaction<Message, State, History extends EventMap, C extends ReactionCommand>
  extends ReactionDecider<Message, State, History, C> {
  options: ConsumerOptions
  source: ReactionSource<Message>
  /** The events `evolve` folds; others in the stream read are passed over. */
  history: History
  /** The stream to read for this message, or null when the decision needs none. */
  load(message: Message): StreamRead | null
  /**
   * Streams named by what was read (a task's stream names its workflow, the workflow its
   * blueprint): asked again after each round of reads, with the state so far, until every stream
   * it names has been read. Each stream is read once per handling.
   */
  loadNext?(message: Message, state: State): readonly StreamRead[]
  /**
   * The last delivery failed: what to record of it before the bus parks the message (a workflow
   * shows the action that kept failing). Run best-effort; the delivery fails all the same.
   */
  giveUp?(input: ReactionInput<Message>, state: State, failure: ReactionFailure<C>): ReactionOutput<C>[]
  handlers: CommandHandlers<C>
}
