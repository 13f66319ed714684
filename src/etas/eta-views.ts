import type { Kysely } from 'kysely'
import { newestPositions } from '../positions/positions-table.js'
import { POSITION_STALE_MS, type EtaBasis } from './eta-method.js'
import { etaView, type EtaView } from './eta-payload.js'

export type { EtaView }

/** How the API shows the ETA read model: the `eta` of tasks and route tasks, the route's `driver_position`. */

/** The columns of `task_etas` a task query joins in (aliased so they sit beside the task's own). */
export const ETA_COLUMNS = [
  'task_etas.eta_at as eta_at', 'task_etas.eta_from as eta_from', 'task_etas.eta_to as eta_to',
  'task_etas.eta_basis as eta_basis', 'task_etas.eta_computed_at as eta_computed_at',
  'task_etas.eta_window_from as eta_window_from', 'task_etas.eta_window_to as eta_window_to', 'task_etas.eta_late_since as eta_late_since',
] as const

export interface EtaColumns {
  eta_at?: Date | string | null
  eta_from?: Date | string | null
  eta_to?: Date | string | null
  eta_basis?: EtaBasis | null
  eta_computed_at?: Date | string | null
  eta_window_from?: Date | string | null
  eta_window_to?: Date | string | null
  eta_late_since?: Date | string | null
}

const ms = (v: Date | string | null | undefined): number | null => (v === null || v === undefined ? null : new Date(v).getTime())


/**
 * A task's ETA from its joined row: only while it waits (pending or started) on a started route;
 * a task under way at its stop or done has its `arrived_at` instead, whatever the engine has not yet
 * caught up with.
 */
export function etaOf(status: string, r: EtaColumns): EtaView | null {
  if ((status !== 'pending' && status !== 'started') || !r.eta_at || !r.eta_from || !r.eta_to || !r.eta_basis || !r.eta_computed_at) return null
  return etaView({
    at: ms(r.eta_at)!, from: ms(r.eta_from)!, to: ms(r.eta_to)!, basis: r.eta_basis, computedAt: ms(r.eta_computed_at)!,
    windowFrom: ms(r.eta_window_from), windowTo: ms(r.eta_window_to), lateSince: ms(r.eta_late_since),
  })
}

/** `heading` only when the device reported one. */
export interface DriverPositionView { lat: number; lng: number; recorded_at: string; heading?: number }

const LIVE_STATUSES = new Set(['published', 'started', 'blocked'])

/**
 * The newest position of each route's driver recorded in the last 15 minutes (DESIGN §3.10), for
 * routes a driver is out on (published, started, blocked); one query for all of them.
 */
export async function driverPositionsOf(db: Kysely<any>, routes: readonly { driver_id: string | null; status: string }[], now: Date): Promise<Map<string, DriverPositionView>> {
  const drivers = routes.filter((r) => r.driver_id !== null && LIVE_STATUSES.has(r.status)).map((r) => r.driver_id!)
  const found = await newestPositions(db, drivers, new Date(now.getTime() - POSITION_STALE_MS))
  return new Map([...found].map(([id, p]) => [id, { lat: p.lat, lng: p.lng, recorded_at: p.recorded_at.toISOString(), ...(p.heading === null ? {} : { heading: p.heading }) }]))
}

export const driverPositionFor = (positions: Map<string, DriverPositionView>, r: { driver_id: string | null; status: string }): DriverPositionView | null =>
  r.driver_id !== null && LIVE_STATUSES.has(r.status) ? positions.get(r.driver_id) ?? null : null
