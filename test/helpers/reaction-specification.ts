import type { EventMap, EventOf } from '../../schemas/events/event-map.js'
import type { ReactionCommand, ReactionDecider, ReactionInput, ReactionOutput } from '../../src/processes/reaction.js'

/** The part of tap's `Test` a specification asserts with. */
interface Asserts {
  same(found: any, wanted: any, ...rest: any[]): unknown
  match(found: any, pattern: any, ...rest: any[]): unknown
}

/**
 * Given the history its load step reads, when an input, then these outputs: the reactions' match
 * of decider-specification.ts. No database, no bus and no clock: `decide` is a pure function.
 *
 *   const spec = ReactionSpecification.for(decider)
 *   spec.given([routed]).when({ message: started, now }).then(t, [send({ type: 'StartRoute', data })])
 *   spec.given([]).when({ message: started, now }).thenIgnores(t, /no route/)
 */
export const ReactionSpecification = {
  for<Message, State, History extends EventMap, C extends ReactionCommand>(decider: ReactionDecider<Message, State, History, C>) {
    return {
      given(history: EventOf<History>[]) {
        return {
          when(input: ReactionInput<Message>) {
            const run = (): ReactionOutput<C>[] => decider.decide(input, history.reduce((s, e) => decider.evolve(s, e), decider.initialState()))
            return {
              /** The outputs decided, compared whole, in their order. */
              then(t: Asserts, expected: ReactionOutput<C>[], message = 'then these outputs'): ReactionOutput<C>[] {
                const decided = run()
                t.same(decided, expected, message)
                return decided
              },
              /** Nothing to do: one Ignore, its reason matching. */
              thenIgnores(t: Asserts, reason: RegExp, message = 'then it is ignored'): void {
                const decided = run()
                t.match(decided, [{ action: 'Ignore', reason }], message)
                t.same(decided.length, 1, 'and nothing else')
              },
            }
          },
        }
      },
    }
  },
}
