import type { EtaBasis } from './eta-method.js'
import { lateByMinutes } from './lateness.js'

/**
 * A task's ETA as the API, the progress stream's `task.eta` frames and the pages show it: the
 * prediction, its uncertainty, the window it is measured against and whether it is late (issue 37).
 */
export interface EtaView {
  at: string
  from: string
  to: string
  basis: EtaBasis
  computed_at: string
  window: { from: string; to: string } | null
  late: boolean
  late_by_minutes: number | null
  late_since: string | null
}

export interface StatedEtaTimes {
  at: number; from: number; to: number; basis: EtaBasis; computedAt: number
  windowFrom: number | null; windowTo: number | null; lateSince: number | null
}

const iso = (ms: number) => new Date(ms).toISOString()

export function etaView(e: StatedEtaTimes): EtaView {
  const lateBy = lateByMinutes(e.at, e.windowTo)
  return {
    at: iso(e.at), from: iso(e.from), to: iso(e.to), basis: e.basis, computed_at: iso(e.computedAt),
    window: e.windowFrom === null || e.windowTo === null ? null : { from: iso(e.windowFrom), to: iso(e.windowTo) },
    late: lateBy !== null, late_by_minutes: lateBy,
    // A late ETA always has its episode's start (older rows without it: since it was stated).
    late_since: lateBy === null ? null : iso(e.lateSince ?? e.computedAt),
  }
}
