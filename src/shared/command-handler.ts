import { ConcurrencyError, type EventMetadata, type EventStore } from '../infrastructure/event-store/event-store.js'
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
      if (deps.projections) await deps.projections.waitFor(result.position, deps.projectionWaitMs ?? 5000)
      return { state, events, position: result.position }
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < maxAttempts) continue
      throw err
    }
  }
}
