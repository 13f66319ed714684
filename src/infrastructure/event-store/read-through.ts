import type { Kysely } from 'kysely'
import type { AppendResult, EventStore, ExpectedVersion, NewEvent, StreamAppend } from './event-store.js'
import { PostgresEventStore } from './postgres-event-store.js'
import { isWrapping } from './wrapping.js'

/**
 * The same PostgreSQL store with its log reads sent over another connection pool: the projector
 * and the relay read through a pool of their own, so request traffic cannot queue them. Appends
 * and wake-ups stay with the original store.
 */
class ReadThroughEventStore extends PostgresEventStore {
  constructor(private readonly original: PostgresEventStore, db: Kysely<any>) {
    super(db, original.upcast)
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

/** Other adapters are returned as they are; a wrapper keeps wrapping the store inside, read through. */
export function readingThrough(store: EventStore, db: Kysely<any>): EventStore {
  if (isWrapping(store)) return store.rewrap(readingThrough(store.wrapped, db))
  return store instanceof PostgresEventStore ? new ReadThroughEventStore(store, db) : store
}
