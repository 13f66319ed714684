import type { AppendResult, EventMetadata, EventStore, ExpectedVersion } from '../infrastructure/event-store/event-store.js'
import { ConcurrencyError } from './concurrency.js'
import type { Decider, DomainEvent } from './decider.js'

export interface Actor { kind: EventMetadata['actor']['kind']; id: string }

/** Who and when: travels with every command so deciders stay pure and events carry their metadata. */
export interface CommandContext {
  now: Date
  actor: Actor
  requestId?: string | undefined
  correlationId?: string | undefined
  causationId?: string | undefined
  /** W3C traceparent of the request's span (tracing on): kept in the events' metadata. */
  traceparent?: string | undefined
  /**
   * The request's Idempotency-Key claim (http/plugins/idempotency.ts), passed along explicitly: a
   * command that names its event with `eventId` can tell, on a `retried` claim, whether an earlier
   * try committed after all (then it answers with that, instead of running twice).
   */
  idempotency?: { eventId: string; retried: boolean } | undefined
}

export interface ProjectionWaiter {
  waitFor(position: string, timeoutMs: number): Promise<boolean>
}

export interface CommandDeps {
  store: EventStore
  projections?: ProjectionWaiter | undefined
  projectionWaitMs?: number
}

export interface CommandResult<State, Event> {
  state: State
  events: Event[]
  position: string | undefined
}

export const metadataOf = (ctx: CommandContext, schemaVersion = 1): EventMetadata => ({
  actor: ctx.actor,
  request_id: ctx.requestId,
  correlation_id: ctx.correlationId ?? ctx.requestId,
  causation_id: ctx.causationId,
  schema_version: schemaVersion,
  occurred_at: ctx.now.toISOString(),
  ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}),
})

/**
 * The bounded read-your-writes wait (DESIGN §2): resolves once every projection has passed
 * `position`, or after PROJECTION_WAIT_MS, whichever comes first. The one place that waits.
 */
export async function awaitReadModels(deps: CommandDeps, position: string | undefined): Promise<void> {
  if (position !== undefined && deps.projections) await deps.projections.waitFor(position, deps.projectionWaitMs ?? 5000)
}

/** Events a decider made for one stream, to append expecting its version (`id`: a caller's idempotent id). */
export interface DecidedAppend<Event extends DomainEvent = DomainEvent> {
  streamId: string
  events: (Event & { id?: string | undefined })[]
  expected: ExpectedVersion
}

/**
 * The write path for events already decided: one atomic append to one or several streams, each
 * expecting its version, with the context's metadata on every event, then the bounded wait for the
 * read models (unless `wait: false`: a process that reads back nothing through them). Whoever decided
 * on the streams' state handles a ConcurrencyError (read again, decide again).
 */
export async function appendDecided(deps: CommandDeps, appends: DecidedAppend[], ctx: CommandContext, opts: { wait?: boolean } = {}): Promise<AppendResult[]> {
  const metadata = metadataOf(ctx)
  const results = await deps.store.appendMany(appends.map((a) => ({
    streamId: a.streamId, expected: a.expected,
    events: a.events.map((e) => ({ ...(e.id ? { id: e.id } : {}), type: e.type, data: e.data, metadata })),
  })))
  if (opts.wait !== false) await awaitReadModels(deps, lastPosition(deps.store, results))
  return results
}

/** The newest position among append results (the one to wait for). */
const lastPosition = (store: Pick<EventStore, 'comparePositions'>, results: AppendResult[]): string | undefined =>
  results.map((r) => r.position).reduce<string | undefined>((a, b) => (a === undefined || store.comparePositions(b, a) > 0 ? b : a), undefined)

/** How a decision on a stream retries on conflicts. */
export interface RetryPolicy {
  /** Tries in all (default 5). */
  maxAttempts?: number
  /** The pause before the try after `attempt` (many writers on one stream: spread them out of step). */
  pauseMs?: (attempt: number) => number
  /** The error once the last try conflicted too (default: that ConcurrencyError). */
  exhausted?: (err: ConcurrencyError) => Error
}

/** A command on one stream: what both paths below decide. */
export interface StreamCommand<State, Command, Event extends DomainEvent> {
  streamId: string
  /** The slice's decider. */
  decider: Decider<State, Command, Event>
  /**
   * The command to decide on `state`, asked again for every state decided on: a runner may build
   * it from what it reads for that state (a route reads the task facts from the rows, then from
   * the task streams once the route's stream decides).
   */
  command: (state: State, from: 'row' | 'stream') => Command | Promise<Command>
  /**
   * The writes of the decided events, expecting `expected` of this stream, as one atomic append
   * (a route's events with the task streams' markers). Default: the events to this stream alone.
   */
  appends?: (events: Event[], expected: ExpectedVersion) => DecidedAppend[]
}

/** The read model's state of a stream and the stream version it was folded from. */
export interface RowState<State> { state: State; version: number }

/**
 * Load the stream, fold it, decide, append with the version read (compare-and-set); on a
 * conflict reload and decide again. Then wait, bounded, for the projections to pass the write so
 * the response and the next GET agree (DESIGN §2, read-your-writes).
 */
export async function handleCommand<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  streamId: string,
  decider: Decider<State, Command, Event>,
  command: Command,
  ctx: CommandContext,
  opts: { eventId?: (event: Event, index: number) => string | undefined; maxAttempts?: number } = {},
): Promise<CommandResult<State, Event>> {
  return decideOnStream(deps, { streamId, decider, command: () => command }, ctx, opts)
}

/**
 * The row fast path, the one copy of it: decide on the read model's state of the stream and append
 * expecting the row's stream version; no stream is read. A stale row (a conflict) or a refusal on
 * it sends the command to the stream itself (`handleCommand`'s loop, with `retry`), which is the
 * authority for both the answer and the error. `from` says which decided: an answer may be folded
 * forward from the row only when the row did.
 */
export async function handleCommandFromRow<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  cmd: StreamCommand<State, Command, Event> & { row: RowState<State> | undefined },
  ctx: CommandContext,
  retry: RetryPolicy = {},
): Promise<CommandResult<State, Event> & { from: 'row' | 'stream' }> {
  if (cmd.row) {
    const { state, version } = cmd.row
    const command = await cmd.command(state, 'row')
    let events: Event[] | undefined
    try {
      events = cmd.decider.decide(command, state)
    } catch {
      // Refused on the row: confirmed (or not) on the stream below.
    }
    if (events?.length === 0) return { state, events, position: undefined, from: 'row' }
    if (events) {
      try {
        const appends = cmd.appends ? cmd.appends(events, version) : [{ streamId: cmd.streamId, events, expected: version }]
        const results = await appendDecided(deps, appends, ctx)
        return { state: events.reduce((s, e) => cmd.decider.evolve(s, e), state), events, position: lastPosition(deps.store, results), from: 'row' }
      } catch (err) {
        if (!(err instanceof ConcurrencyError)) throw err
      }
    }
  }
  return { ...(await decideOnStream(deps, cmd, ctx, retry)), from: 'stream' }
}

/** The stream path: read, fold, decide, append expecting the version read; again on a conflict. */
async function decideOnStream<State, Command, Event extends DomainEvent>(
  deps: CommandDeps,
  cmd: StreamCommand<State, Command, Event>,
  ctx: CommandContext,
  opts: RetryPolicy & { eventId?: (event: Event, index: number) => string | undefined },
): Promise<CommandResult<State, Event>> {
  const { decider, streamId } = cmd
  const maxAttempts = opts.maxAttempts ?? 5
  for (let attempt = 1; ; attempt++) {
    const history = await deps.store.readStream(streamId)
    let state = decider.initialState()
    for (const e of history) state = decider.evolve(state, { type: e.type, data: e.data } as Event)
    const events = decider.decide(await cmd.command(state, 'stream'), state)
    if (events.length === 0) return { state, events, position: undefined }
    const expected: ExpectedVersion = history.length === 0 ? 'no_stream' : history.length
    const metadata = metadataOf(ctx)
    try {
      const position = cmd.appends
        ? lastPosition(deps.store, await appendDecided(deps, cmd.appends(events, expected), ctx, { wait: false }))
        : (await deps.store.append(streamId, events.map((e, i) => ({ id: opts.eventId?.(e, i), type: e.type, data: e.data, metadata })), expected)).position
      for (const e of events) state = decider.evolve(state, e)
      await awaitReadModels(deps, position)
      return { state, events, position }
    } catch (err) {
      if (!(err instanceof ConcurrencyError)) throw err
      if (attempt >= maxAttempts) throw opts.exhausted ? opts.exhausted(err) : err
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs!(attempt)))
    }
  }
}
