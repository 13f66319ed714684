import type { Kysely } from 'kysely'
import type { AppendResult, EventStore, ExpectedVersion, NewEvent, StreamAppend } from './event-store.js'
import { PostgresEventStore } from './postgres-event-store.js'
import type { Upcaster } from './upcasting.js'
import { isWrapping } from './wrapping.js'

/**
 * The same PostgreSQL store with its log reads sent over another connection pool: the projector
 * and the relay read through a pool of their own, so request traffic cannot queue them. Appends
 * and wake-ups stay with the original store.
 */
class ReadThroughEventStore extends PostgresEventStore {
  constructor(private readonly original: PostgresEventStore, db: Kysely<any>, upcast: Upcaster = original.upcast, asStored = false) {
    super(db, upcast)
    this.keepsStoredForm = asStored
  }

  override append(streamId: string, events: NewEvent[], expected: ExpectedVersion): Promise<AppendResult> {
    return this.original.append(streamId, events, expected)
  }

  override appendMany(appends: StreamAppend[]): Promise<AppendResult[]> {
    return this.original.appendMany(appends)
  }

  override onAppended(listener: (head?: string) => void): () => void {
    return this.original.onAppended(listener)
  }

  override async close(): Promise<void> { /* the original owns the wake-ups */ }
}

/** An adapter that can read its log as it was stored, without the upcaster (KurrentDB's). */
interface ReadableAsStored { asStored(): EventStore }
const readableAsStored = (store: EventStore): store is EventStore & ReadableAsStored =>
  'asStored' in store && typeof store.asStored === 'function'

const asItWasStored: Upcaster = (e) => e

/**
 * Other adapters are returned as they are; a wrapper keeps wrapping the store inside, read through.
 * `asStored`: events come as they were written (type and payload before any upcaster), which is
 * what the notary seals: a later rename or payload step must change no leaf.
 */
export function readingThrough(store: EventStore, db: Kysely<any>, opts: { asStored?: boolean } = {}): EventStore {
  if (isWrapping(store)) return store.rewrap(readingThrough(store.wrapped, db, opts))
  if (store instanceof PostgresEventStore) return new ReadThroughEventStore(store, db, opts.asStored ? asItWasStored : store.upcast, opts.asStored === true)
  if (!opts.asStored) return store
  if (readableAsStored(store)) return store.asStored()
  throw new Error('this event store cannot be read as stored')
}
