import type { TimeWindow } from './eta-method.js'

/**
 * The delay rule of DESIGN §3.10, pure: late by the threshold → ask for TaskDelayed, once; an ETA
 * back inside the window (at or before its end) re-arms it, and says so (task.back_on_time). Its input is not a relayed event but a
 * task's ETA as the engine computes it (eta-model.ts), so it is a decide/evolve pair the engine
 * calls, not a reaction on the runner; the request is only a wish, the task's stream decides
 * (delay-task.ts).
 */

/** One task's ETA as a computation sees it: against its window (null: none), late by `lateMs` (null: not comparable). */
export interface EtaSeen {
  ulid: string; organizationId: string; at: number; window: TimeWindow | null; lateMs: number | null; now: number
  /** Since when the ETAs have been late (this episode). */
  lateSince: number
}

/** What the rule remembers of a task (the model's TaskState holds it): its last delay, and when it came back inside since. */
export interface DelayWatch { delayedAt: number | null; backInsideAt: number | null }

/** TaskDelayed asked for: the engine runs it as DelayTask on the task's stream (delay-task.ts). */
export interface DelayRequest {
  ulid: string; organizationId: string; eta: number; windowTo: number; minutesLate: number; backInsideAt: number | null; now: number
  /** Since when the ETAs have been late (this episode). */
  lateSince: number
}

/** A delayed task's ETA back inside its window: task.back_on_time (back-on-time.ts). */
export interface BackOnTimeRequest { ulid: string; eta: number; windowTo: number; delayedAt: number; now: number }

export type DelayOutput =
  | { action: 'Send'; message: DelayRequest }
  | { action: 'BackOnTime'; message: BackOnTimeRequest }
  | { action: 'Ignore'; reason: string }

/** A first delay, or one since the ETA came back inside after the last. */
const armed = (w: DelayWatch): boolean => w.delayedAt === null || (w.backInsideAt !== null && w.backInsideAt > w.delayedAt)

export function decideDelay(seen: EtaSeen, watch: DelayWatch, thresholdMs: number): DelayOutput[] {
  if (seen.window === null || seen.lateMs === null) return [{ action: 'Ignore', reason: 'no window to be late for' }]
  if (seen.lateMs <= 0 && !armed(watch)) {
    return [{ action: 'BackOnTime', message: { ulid: seen.ulid, eta: seen.at, windowTo: seen.window.to, delayedAt: watch.delayedAt!, now: seen.now } }]
  }
  if (seen.lateMs < thresholdMs) return [{ action: 'Ignore', reason: 'not late by the threshold' }]
  if (!armed(watch)) return [{ action: 'Ignore', reason: 'delayed already, not back inside since' }]
  return [{
    action: 'Send',
    message: {
      ulid: seen.ulid, organizationId: seen.organizationId, eta: seen.at, windowTo: seen.window.to, minutesLate: Math.round(seen.lateMs / 60_000),
      // The episode: the first delay (null), or the one after coming back inside.
      backInsideAt: watch.delayedAt !== null ? watch.backInsideAt : null, now: seen.now, lateSince: seen.lateSince,
    },
  }]
}

/** A delayed task whose ETA is back inside its window is armed again. */
export function evolveDelay(watch: DelayWatch, seen: EtaSeen): DelayWatch {
  if (seen.window === null || seen.lateMs === null || seen.lateMs > 0 || armed(watch)) return watch
  return { ...watch, backInsideAt: seen.now }
}
