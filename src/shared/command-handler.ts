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
  const maxAttempts = opts.maxAttempts ?? 5
  for (let attempt = 1; ; attempt++) {
    const history = await deps.store.readStream(streamId)
    let state = decider.initialState()
    for (const e of history) state = decider.evolve(state, { type: e.type, data: e.data } as Event)
    const events = decider.decide(command, state)
    if (events.length === 0) return { state, events, position: undefined }
    const metadata = metadataOf(ctx)
    try {
      const result = await deps.store.append(
        streamId,
        events.map((e, i) => ({ id: opts.eventId?.(e, i), type: e.type, data: e.data, metadata })),
        history.length === 0 ? 'no_stream' : history.length,
      )
      for (const e of events) state = decider.evolve(state, e)
      await awaitReadModels(deps, result.position)
      return { state, events, position: result.position }
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < maxAttempts) continue
      throw err
    }
  }
}
