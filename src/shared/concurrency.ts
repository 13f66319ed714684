/**
 * Optimistic concurrency, as the event store's port states it (and re-exports from here): what an
 * append expects of its stream, and the error when another writer moved it first. It stands here
 * so that the command handler, which reads again and decides again on a conflict, needs nothing
 * of the store's folder at run time.
 */

/** `no_stream`: the stream must not exist; a number: its current version must be exactly that. */
export type ExpectedVersion = 'no_stream' | 'any' | 'stream_exists' | number

export class ConcurrencyError extends Error {
  readonly code = 'concurrency_conflict'
  constructor(readonly streamId: string, readonly expected: ExpectedVersion, readonly actual: number | undefined) {
    super(`stream ${streamId} expected version ${String(expected)} but found ${actual ?? 'no stream'}`)
  }
}
