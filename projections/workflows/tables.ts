import type { ColumnType } from 'kysely'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
/** bigint: `pg` returns it as a string, PGlite as a number; write numbers. */
type Int8 = ColumnType<number | string, number, number>
type Int8Null = ColumnType<number | string | null, number | null, number | null>
type Json<T> = ColumnType<T, string, string>

export interface WorkflowErrorItem { action_key: string; error: string; at: string }

/** One row per workflow; its tasks are the `tasks` rows with its workflow_id. */
export interface WorkflowsTable {
  id: Int8
  organization_id: string
  status: 'new' | 'scheduled' | 'in_progress' | 'completed' | 'failed' | 'cancelled'
  blueprint_id: Int8
  blueprint_key: string
  /** The version it started with and keeps. */
  blueprint_version: number
  data: Json<Record<string, unknown>>
  shipment_id: Int8Null
  /** Actions parked in the dead letters. */
  errors: Json<WorkflowErrorItem[]>
  created_at: Ts
  updated_at: Ts
  completed_at: TsNull
  failed_at: TsNull
  cancelled_at: TsNull
}

/** An organization's workflows per (blueprint scope, status, UTC day of created_at); `blueprint_key` '' counts all of them. No row at zero. */
export interface WorkflowListingCountsTable {
  org_id: string
  blueprint_key: string
  status: string
  /** 'YYYY-MM-DD' in; the driver's date type out (read it through to_char). */
  day: ColumnType<unknown, string, string>
  n: Int8
}

export interface WorkflowsTables {
  workflows: WorkflowsTable
  workflow_listing_counts: WorkflowListingCountsTable
}
