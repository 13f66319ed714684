import type { Metrics } from '../metrics/metrics.js'
import { ConcurrencyError, type AppendResult, type EventStore, type ExpectedVersion, type NewEvent, type StreamAppend } from './event-store.js'
import type { WrappingEventStore } from './wrapping.js'
import { inSpan, tracingEnabled } from '../tracing/tracing.js'

/**
 * The store with its writes timed into `metrics` and, when the events carry a trace, recorded as a
 * span of it; reads and everything else go straight to the store. Adapter-specific wrappers
 * (readingThrough) apply to the store inside (WrappingEventStore).
 */
class InstrumentedStore implements WrappingEventStore {
  readonly startPosition: string

  constructor(private readonly store: EventStore, private readonly metrics: Pick<Metrics, 'eventStoreAppend'>) {
    this.startPosition = store.startPosition
  }

  get wrapped(): EventStore { return this.store }
  rewrap(inner: EventStore): EventStore { return new InstrumentedStore(inner, this.metrics) }

  private timed<T>(streams: string, events: NewEvent[], write: () => Promise<T>): Promise<T> {
    const traceparent = events[0]?.metadata.traceparent
    if (!traceparent || !tracingEnabled()) return this.measured(write)
    return inSpan('event_store.append', traceparent, { attributes: { 'event_store.streams': streams, 'event_store.events': events.length } }, () => this.measured(write))
  }

  private async measured<T>(write: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint()
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9
    try {
      const result = await write()
      this.metrics.eventStoreAppend(seconds(), 'ok')
      return result
    } catch (err) {
      this.metrics.eventStoreAppend(seconds(), err instanceof ConcurrencyError ? 'conflict' : 'error')
      throw err
    }
  }

  append(streamId: string, events: NewEvent[], expected: ExpectedVersion): Promise<AppendResult> {
    return this.timed(streamId, events, () => this.store.append(streamId, events, expected))
  }

  appendMany(appends: StreamAppend[]): Promise<AppendResult[]> {
    return this.timed(appends.map((a) => a.streamId).join(','), appends.flatMap((a) => a.events), () => this.store.appendMany(appends))
  }

  readStream: EventStore['readStream'] = (streamId, opts) => this.store.readStream(streamId, opts)
  readStreams: EventStore['readStreams'] = (streamIds, opts) => this.store.readStreams(streamIds, opts)
  readAll: EventStore['readAll'] = (checkpoint, limit) => this.store.readAll(checkpoint, limit)
  onAppended: EventStore['onAppended'] = (listener) => this.store.onAppended(listener)
  headPosition: EventStore['headPosition'] = () => this.store.headPosition()
  eventsAfter: EventStore['eventsAfter'] = (position) => this.store.eventsAfter(position)
  comparePositions: EventStore['comparePositions'] = (a, b) => this.store.comparePositions(a, b)
  get streamOfEvent(): EventStore['streamOfEvent'] {
    const inner = this.store
    return inner.streamOfEvent ? (id) => inner.streamOfEvent!(id) : undefined
  }
  close: EventStore['close'] = () => this.store.close()
}

export const instrumented = (store: EventStore, metrics: Pick<Metrics, 'eventStoreAppend'>): EventStore => new InstrumentedStore(store, metrics)
