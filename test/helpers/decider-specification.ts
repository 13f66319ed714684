import type { Decider } from '../../src/shared/decider.js'

/** The part of tap's `Test` a specification asserts with. */
interface Asserts {
  same(found: any, wanted: any, ...rest: any[]): unknown
  match(found: any, pattern: any, ...rest: any[]): unknown
  ok(value: any, ...rest: any[]): unknown
  fail(...rest: any[]): unknown
}

type ErrorClass = abstract new (...args: any[]) => Error

/**
 * Given events, when a command, then events (or an error, or nothing): Emmett's
 * `DeciderSpecification`, on tap. No database and no clock: the decider is a pure function.
 *
 *   const spec = DeciderSpecification.for(decider)
 *   spec.given([created]).when(cancel).then(t, [cancelled])
 *   spec.given([created, cancelled]).when(cancel).thenThrows(t, IllegalStateError, { code: 'shipment_final' })
 */
export const DeciderSpecification = {
  for<State, Command, Event>(decider: Decider<State, Command, Event>) {
    return {
      given(events: Event[]) {
        return {
          when(command: Command) {
            const run = (): Event[] => decider.decide(command, events.reduce(decider.evolve, decider.initialState()))
            return {
              /** The events decided, compared whole. */
              then(t: Asserts, expected: Event[], message = 'then these events'): Event[] {
                const decided = run()
                t.same(decided, expected, message)
                return decided
              },
              /** The events decided, matched against patterns (for ids and times drawn by the command). */
              thenMatches(t: Asserts, expected: unknown[], message = 'then events like these'): Event[] {
                const decided = run()
                t.match(decided, expected, message)
                t.same(decided.length, expected.length, 'and no more')
                return decided
              },
              /** An idempotent repeat: nothing to append. */
              thenNothingHappened(t: Asserts, message = 'then nothing happened'): void {
                t.same(run(), [], message)
              },
              thenThrows(t: Asserts, errorClass: ErrorClass, fields: Record<string, unknown> = {}): Error | undefined {
                try {
                  run()
                } catch (err) {
                  t.ok(err instanceof errorClass, `then it throws ${errorClass.name}`)
                  t.match(err, fields)
                  return err as Error
                }
                t.fail(`expected ${errorClass.name}, but the command was accepted`)
                return undefined
              },
            }
          },
        }
      },
    }
  },
}
