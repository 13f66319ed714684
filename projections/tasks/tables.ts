import type { ColumnType } from 'kysely'
import type { FailureReason, TaskType } from '../../schemas/events/tasks.js'
import type { TaskStatus } from '../../schemas/api/tasks.js'

type Ts = ColumnType<Date, Date | string, Date | string>
type TsNull = ColumnType<Date | null, Date | string | null, Date | string | null>
/** bigint: `pg` returns it as a string, PGlite as a number; write numbers. */
type Int8 = ColumnType<number | string, number, number>
type Int8Null = ColumnType<number | string | null, number | null, number | null>
type Json<T> = ColumnType<T, string, string>

/** An attachment as the task keeps it (the bytes are in the blob store). */
export interface TaskAttachmentItem {
  id: string; filename: string; content_type: string; size: number; sha256: string; blob_key: string
  description: string | null; uploaded_by: string; uploaded_at: string
}

/** One row per task (column meanings: docs/read-models.md). */
export interface TasksTable {
  ulid: string
  organization_id: string
  type: TaskType
  status: TaskStatus
  /** The address in the `addresses` row form (shipments' addressRow). */
  address: Json<Record<string, unknown>>
  shipment_id: Int8Null
  workflow_id: Int8Null
  step_key: string | null
  assignee_id: string | null
  route_id: Int8Null
  position: number | null
  time_windows: Json<{ from: string; to: string }[]>
  duration_minutes: number | null
  dependencies: Json<string[]>
  requirements: Json<{ complete: string[]; fail: string[] }>
  load_grams: Int8
  load_volume_cm3: Int8
  load_packages: Int8
  signed_by: string | null
  barcode: string | null
  failure_reason: FailureReason | null
  notes: string | null
  external_reference: string | null
  attachments: Json<TaskAttachmentItem[]>
  started_at: TsNull
  arrived_at: TsNull
  completed_at: TsNull
  failed_at: TsNull
  cancelled_at: TsNull
  created_at: Ts
  updated_at: Ts
  /** Events in the task's stream this row reflects (a command appends expecting it). */
  stream_version: number
}

/**
 * An organization's tasks per (assignee, status, type, UTC day of created_at); `assignee_id` ''
 * counts all of them, a user's id the ones assigned to it. No row at zero.
 */
export interface TaskListingCountsTable {
  org_id: string
  assignee_id: string
  status: string
  type: string
  /** 'YYYY-MM-DD' in; the driver's date type out (read it through to_char). */
  day: ColumnType<unknown, string, string>
  n: Int8
}

/** One row per task and UTC day one of its time windows touches (what `shift_date` reads). */
export interface TaskShiftDaysTable {
  ulid: string
  day: ColumnType<unknown, string, string>
  org_id: string
  created_at: Ts
}

export interface TasksTables {
  tasks: TasksTable
  task_listing_counts: TaskListingCountsTable
  task_shift_days: TaskShiftDaysTable
}
