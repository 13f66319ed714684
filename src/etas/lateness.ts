import type { TimeWindow } from './eta-method.js'

/**
 * Lateness (issue 37): a stated ETA is late when it lies past the end of the time window it was
 * measured against by a minute or more (the precision an ETA is restated to: less is noise). Pure:
 * times are epoch milliseconds, `now` is the computation's own time.
 */

/** Past the window's end by this much before a stop is called late. */
export const LATE_AFTER_MS = 60_000

export interface Lateness {
  windowFrom: number | null
  windowTo: number | null
  /** When the ETAs of this episode first came out late; null while on time. */
  lateSince: number | null
}

/** Whole minutes past the window's end, or null when on time (or without a window). */
export function lateByMinutes(at: number, windowTo: number | null): number | null {
  if (windowTo === null) return null
  const late = at - windowTo
  return late >= LATE_AFTER_MS ? Math.round(late / 60_000) : null
}

/** The lateness of a newly stated ETA: a late one keeps the episode's start from the ETA before it. */
export function latenessOf(at: number, window: TimeWindow | null, previous: { lateSince: number | null } | null, now: number): Lateness {
  const windowTo = window?.to ?? null
  const late = lateByMinutes(at, windowTo) !== null
  return { windowFrom: window?.from ?? null, windowTo, lateSince: late ? previous?.lateSince ?? now : null }
}
