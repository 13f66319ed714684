import type { Static, TSchema } from 'typebox'

/**
 * One map per stream of its event types to their payload schemas (`TaskEvents`, `RouteEvents`, …):
 * the single spelling of a stream's events, from which the rest derives:
 * - `EventOf<typeof TaskEvents>`: the union a decider emits and folds, `{ type: 'TaskStarted', data: TaskStarted } | …`;
 * - `eventNames(TaskEvents)`: the type names (a projection's `handles`; a consumer's subjects come
 *   from `subjectsOf` in src/shared/event-subjects.ts);
 * - `RecordedOf<typeof TaskEvents>` (projections/projection.ts): a projection's typed batch, where a
 *   `switch (e.type)` narrows `e.data` with no cast.
 */
export type EventMap = Readonly<Record<string, TSchema>>

/** The `{ type, data }` union of a map's events. */
export type EventOf<M extends EventMap> = { [K in keyof M & string]: { type: K; data: Static<M[K]> } }[keyof M & string]

/** The type names of a map, in its order. */
export const eventNames = <M extends EventMap>(map: M): (keyof M & string)[] => Object.keys(map) as (keyof M & string)[]

/** The part of a map a reader takes (a projection that handles some of a stream's events): its names and typed batch follow. */
export const pick = <M extends EventMap, K extends keyof M & string>(map: M, ...names: K[]): Pick<M, K> =>
  Object.fromEntries(names.map((n) => [n, map[n]])) as Pick<M, K>

/**
 * Whether `e` (an event read from a store, untyped) is the map's event `type`: a guard that narrows
 * `e.data` to its payload, so a reader of a stream's history needs no cast.
 */
export const isEvent = <M extends EventMap, K extends keyof M & string, E extends { type: string; data: unknown }>(
  map: M, type: K, e: E | undefined,
): e is E & { type: K; data: Static<M[K]> } => e !== undefined && e.type === type && type in map

/** Whether `type` is one of the names of a map (or of a table keyed by a map's names), which it then indexes with no cast. */
export const isEventName = <M extends object>(map: M, type: string): type is keyof M & string => Object.hasOwn(map, type)

/**
 * Whether `e` is one of the map's events: a stream's history read untyped folds through a typed
 * `evolve` with the others (none in a well-formed stream) passed over.
 */
export const isEventOf = <M extends EventMap, E extends { type: string; data: unknown }>(map: M, e: E): e is E & EventOf<M> =>
  Object.hasOwn(map, e.type)
