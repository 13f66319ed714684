import type { CompiledQuery, Kysely } from 'kysely'
import type { Static } from 'typebox'
import type { RecordedEvent } from '../src/infrastructure/event-store/event-store.js'
import { eventNames, type EventMap } from '../schemas/events/event-map.js'
import type { ChangeKey } from './change-notices.js'
import type { ReadModelDatabase } from './read-model-database.js'

export interface ProjectionContext {
  /** The schema the rows go to: `read_model`, or the fresh one during `rebuild`. */
  schema: string
  /**
   * Reports rows this batch changes, by a topic of the projection's own (its exported constant) and
   * their keys. The runner tells whoever keeps copies (change-notices.ts): one notice per round.
   */
  changed(topic: string, keys: Iterable<ChangeKey>): void
}

/**
 * Turns events into read-model rows. `apply` gets a whole batch so it can write with few
 * statements; it runs in the transaction that also moves the checkpoint (exactly-once).
 * A projection must not throw on an event it does not understand: it skips it. It knows nothing of
 * who reads its rows: it reports what it changed through `ctx.changed`, and the caches subscribe.
 */
export interface Projection {
  name: string
  handles: readonly string[]
  apply(trx: Kysely<ReadModelDatabase>, events: RecordedEvent[], ctx: ProjectionContext): Promise<void>
  /**
   * The same writes as `apply`, returned instead of run, so the runner can send the checkpoint's
   * compare-and-set and every projection's writes in one round trip. `db` is outside the round's
   * transaction: what it reads is the last committed round, which is what `apply` would see, since
   * the round fails whole when another writer moved the checkpoint meanwhile. Optional: a
   * projection without it makes its rounds take the usual path.
   */
  statements?(db: Kysely<ReadModelDatabase>, events: RecordedEvent[], ctx: ProjectionContext): Promise<CompiledQuery[]>
}

/** A recorded event of a map, its `data` typed by its `type`: a `switch (e.type)` narrows it. */
export type RecordedOf<M extends EventMap> = { [K in keyof M & string]: RecordedEvent<K, Static<M[K]>> }[keyof M & string]

/**
 * A projection of the events of `events` (one stream's map, or several spread together): `handles`
 * is the map's names, and `apply` (and `statements`) get the batch typed by it.
 */
export function defineProjection<M extends EventMap>(p: {
  name: string
  events: M
  apply(trx: Kysely<ReadModelDatabase>, events: RecordedOf<M>[], ctx: ProjectionContext): Promise<void>
  statements?(db: Kysely<ReadModelDatabase>, events: RecordedOf<M>[], ctx: ProjectionContext): Promise<CompiledQuery[]>
}): Projection {
  // The runner hands a projection only the events it handles: the filter keeps them all, and is
  // what types the batch by the map.
  const ofMap = (e: RecordedEvent): e is RecordedOf<M> => Object.hasOwn(p.events, e.type)
  return {
    name: p.name,
    handles: eventNames(p.events),
    apply: (trx, events, ctx) => p.apply(trx, events.filter(ofMap), ctx),
    ...(p.statements ? { statements: (db: Kysely<ReadModelDatabase>, events: RecordedEvent[], ctx: ProjectionContext) => p.statements!(db, events.filter(ofMap), ctx) } : {}),
  }
}
