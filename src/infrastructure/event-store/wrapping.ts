import type { EventStore } from './event-store.js'

/**
 * A store that adds something around another one (timing, say). Adapter-specific wrappers such as
 * readingThrough apply to the store inside and keep the outer layer: `rewrap(inner)`.
 */
export interface WrappingEventStore extends EventStore {
  readonly wrapped: EventStore
  rewrap(inner: EventStore): EventStore
}

export const isWrapping = (store: EventStore): store is WrappingEventStore =>
  'wrapped' in store && 'rewrap' in store && typeof store.rewrap === 'function'
