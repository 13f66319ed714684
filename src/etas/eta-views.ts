import type { Kysely } from 'kysely'
import { newestPositions } from '../positions/positions-table.js'
import { POSITION_STALE_MS, type EtaBasis } from './eta-method.js'
import { iso } from '../shared/rows.js'

/** How the API shows the ETA read model: the `eta` of tasks and route tasks, the route's `driver_position`. */

export interface EtaView { at: string; from: string; to: string; basis: EtaBasis; computed_at: string }

/** The columns of `task_etas` a task query joins in (aliased so they sit beside the task's own). */
export const ETA_COLUMNS = [
  'task_etas.eta_at as eta_at', 'task_etas.eta_from as eta_from', 'task_etas.eta_to as eta_to',
  'task_etas.eta_basis as eta_basis', 'task_etas.eta_computed_at as eta_computed_at',
] as const

export interface EtaColumns {
  eta_at?: Date | string | null
  eta_from?: Date | string | null
  eta_to?: Date | string | null
  eta_basis?: EtaBasis | null
  eta_computed_at?: Date | string | null
}


/**
 * A task's ETA from its joined row: only while it waits (pending or started) on a started route;
 * a task under way at its stop or done has its `arrived_at` instead, whatever the engine has not yet
 * caught up with.
 */
export function etaOf(status: string, r: EtaColumns): EtaView | null {
  if ((status !== 'pending' && status !== 'started') || !r.eta_at || !r.eta_from || !r.eta_to || !r.eta_basis || !r.eta_computed_at) return null
  return { at: iso(r.eta_at), from: iso(r.eta_from), to: iso(r.eta_to), basis: r.eta_basis, computed_at: iso(r.eta_computed_at) }
}

export interface DriverPositionView { lat: number; lng: number; recorded_at: string }

const LIVE_STATUSES = new Set(['published', 'started', 'blocked'])

/**
 * The newest position of each route's driver recorded in the last 15 minutes (DESIGN §3.10), for
 * routes a driver is out on (published, started, blocked); one query for all of them.
 */
export async function driverPositionsOf(db: Kysely<any>, routes: readonly { driver_id: string | null; status: string }[], now: Date): Promise<Map<string, DriverPositionView>> {
  const drivers = routes.filter((r) => r.driver_id !== null && LIVE_STATUSES.has(r.status)).map((r) => r.driver_id!)
  const found = await newestPositions(db, drivers, new Date(now.getTime() - POSITION_STALE_MS))
  return new Map([...found].map(([id, p]) => [id, { lat: p.lat, lng: p.lng, recorded_at: p.recorded_at.toISOString() }]))
}

export const driverPositionFor = (positions: Map<string, DriverPositionView>, r: { driver_id: string | null; status: string }): DriverPositionView | null =>
  r.driver_id !== null && LIVE_STATUSES.has(r.status) ? positions.get(r.driver_id) ?? null : null
