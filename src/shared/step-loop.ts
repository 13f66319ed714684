import type { Wakeup } from './wakeup.js'
import { isDatabaseUnavailable } from './unavailable.js'

export interface StepLoopOptions<R extends string> {
  /** Read before each round: the loop ends once it is true. */
  stopped: () => boolean
  /** One round; `more` runs the next at once. */
  step: () => Promise<R | 'more'>
  /** After any other outcome: waits for the next round (usually the wakeup's sleep). */
  rest: (outcome: Exclude<R, 'more'>) => Promise<unknown>
  /** A round (or its rest) threw: forget what it held, log. The loop then backs off. */
  failed: (err: unknown) => void
  /** What the backoff sleeps on, so a kick (stop) ends it early. */
  wakeup: Wakeup
  /** The wait after the n-th failure in a row (default `backoffMs`). */
  backoff?: (failures: number, err?: unknown) => number
  /** What the backoff sleeps on instead of `wakeup` (one that only a stop kicks, not new work). */
  backoffWakeup?: Wakeup
}

/**
 * The wait after the n-th failure in a row: 200 ms doubling to 5 s at the most; 1 s at the most
 * while the database cannot be reached, so a worker is back within a second of its restart (what
 * it retries is one cheap connection attempt, refused at once or bounded by the connect timeout).
 */
export const backoffMs = (failures: number, err?: unknown): number =>
  Math.min(err !== undefined && isDatabaseUnavailable(err) ? 1000 : 5000, 100 * 2 ** Math.min(failures, 6))

/**
 * The loop of a leased background worker (the relay, the notary, the ETA engine): a round after
 * another while there is more, a rest after a round that caught up or stood by, and a growing wait
 * after rounds that failed, until `stopped`.
 */
export async function runStepLoop<R extends string>(o: StepLoopOptions<R>): Promise<void> {
  let failures = 0
  while (!o.stopped()) {
    try {
      const next = await o.step()
      failures = 0
      if (next === 'more') continue
      await o.rest(next as Exclude<R, 'more'>)
    } catch (err) {
      failures++
      o.failed(err)
      await (o.backoffWakeup ?? o.wakeup).sleep((o.backoff ?? backoffMs)(failures, err))
    }
  }
}
