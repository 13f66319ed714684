import type { ColumnType } from 'kysely'
import type { EtaBasis, StopStatus } from '../../src/etas/eta-method.js'
import type { RouteStatus } from '../../src/etas/eta-method.js'

// The ETA read model (DESIGN §3.10), written by the ETA engine (src/etas/eta-engine.ts), not by the
// projection runner: it follows drivers' positions as well as the log. Column meanings: docs/read-models.md.

/** bigint: `pg` returns it as a string, PGlite as a number; write numbers. */
type Int8 = ColumnType<number | string, number, number>
type Int8Null = ColumnType<number | string | null, number | null, number | null>
type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
type Json<T> = ColumnType<T, string, string>

export interface EtaRoutesTable {
  route_id: Int8
  organization_id: string
  driver_id: string | null
  status: RouteStatus
  start_lat: number | null
  start_lng: number | null
  started_at: TsNull
  task_ulids: Json<string[]>
  position_lat: number | null
  position_lng: number | null
  position_recorded_at: TsNull
  leg_meters: number
  leg_ms: number
  computed_at: TsNull
  eta_seq: Int8
}

export interface TaskEtasTable {
  ulid: string
  organization_id: string
  route_id: Int8Null
  status: StopStatus
  lat: number | null
  lng: number | null
  time_windows: Json<{ from: string; to: string }[]>
  service_ms: Int8
  arrived_at: TsNull
  final_at: TsNull
  eta_at: TsNull
  eta_from: TsNull
  eta_to: TsNull
  eta_basis: EtaBasis | null
  eta_computed_at: TsNull
  /** The time window the stated ETA was measured against (null: the task has none). */
  eta_window_from: TsNull
  eta_window_to: TsNull
  /** Since when the stated ETAs have been past that window's end (null: not late). */
  eta_late_since: TsNull
  history_seq: number
  delayed_at: TsNull
  back_inside_at: TsNull
}

export interface TaskEtaHistoryTable {
  task_ulid: string
  seq: number
  route_id: Int8
  organization_id: string
  computed_at: Ts
  eta_at: Ts
  eta_from: Ts
  eta_to: Ts
  basis: string
  stops_ahead: number
  window_from: TsNull
  window_to: TsNull
  arrived_at: TsNull
  outcome: string | null
}

export interface RouteEtaFeedTable {
  route_id: Int8
  seq: Int8
  task_ulid: string
  data: Json<Record<string, unknown>>
}

export interface EtaCheckpointTable {
  name: string
  log_checkpoint: string
  positions_checkpoint: string
  owner: string | null
  lease_until: TsNull
}

export interface EtaTables {
  eta_routes: EtaRoutesTable
  task_etas: TaskEtasTable
  task_eta_history: TaskEtaHistoryTable
  route_eta_feed: RouteEtaFeedTable
  eta_checkpoint: EtaCheckpointTable
}
