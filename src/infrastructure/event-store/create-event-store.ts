import type { Config } from '../../config.js'
import type { DatabaseHandle } from '../database/connection.js'
import type { EventStore } from './event-store.js'
import { PostgresEventStore } from './postgres-event-store.js'
import { upcasters } from './upcasting.js'
import type { OtherReaders } from './append-notices.js'

/** `EVENTSTORE_URL` picks the adapter; by default the log lives in the read-model database (DESIGN §2). */
/** `others`: how the PostgreSQL store wakes readers in other processes (KurrentDB's readers subscribe by themselves). */
export async function createEventStore(config: Config, database: DatabaseHandle, others?: OtherReaders): Promise<EventStore> {
  const url = config.eventStoreUrl
  if (url && /^(esdb|kurrentdb|kurrent)(\+discover)?:\/\//.test(url)) {
    const { KurrentEventStore } = await import('./kurrent-event-store.js')
    return KurrentEventStore.connect(url, upcasters)
  }
  if (url && url !== config.databaseUrl) {
    throw new Error('EVENTSTORE_URL must be esdb://, kurrentdb:// or the same PostgreSQL database as DATABASE_URL (the projector reads the log and writes read models in one transaction)')
  }
  const store = new PostgresEventStore(database.db, upcasters, undefined, others)
  await store.listenWith(database.listen)
  return store
}
