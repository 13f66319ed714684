import { Type, type Static } from 'typebox'
import { AddressSnapshot } from './shipments.js'

// Event payloads of the task stream `task-<ulid>`, version 1 (DESIGN §1: upcast on read, never rewritten).
// Every payload names its task (`ulid`) and organization, so a consumer (organization webhooks, the
// process manager) needs nothing but the event; each carries its own time.

export const TaskType = Type.Union([
  Type.Literal('pickup'), Type.Literal('delivery'), Type.Literal('inspection'), Type.Literal('return'), Type.Literal('service'),
], { title: 'TaskType' })
export type TaskType = Static<typeof TaskType>

export const Requirement = Type.Union([Type.Literal('signature'), Type.Literal('photo'), Type.Literal('barcode_scan'), Type.Literal('notes')], { title: 'TaskRequirement' })
export type Requirement = Static<typeof Requirement>

export const FailureReason = Type.Union([
  Type.Literal('no_answer'), Type.Literal('bad_address'), Type.Literal('rejected'), Type.Literal('damaged'), Type.Literal('closed'), Type.Literal('other'),
], { title: 'FailureReason' })
export type FailureReason = Static<typeof FailureReason>

export const TimeWindow = Type.Object({ from: Type.String(), to: Type.String() })
export const Load = Type.Object({ grams: Type.Integer(), volume_cm3: Type.Integer(), packages: Type.Integer() })
export const Requirements = Type.Object({ complete: Type.Array(Requirement), fail: Type.Array(Requirement) })
export type Requirements = Static<typeof Requirements>

const Ids = { ulid: Type.String(), organization_id: Type.String() }
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])
/**
 * Where the task stood when the step happened, so that reactions to it need not read its stream: the
 * route it was on and the workflow it belongs to (null: none). Absent on events written before
 * they were recorded.
 */
const StepContext = { route_id: Type.Optional(Nullable(Type.Integer())), workflow_id: Type.Optional(Nullable(Type.Integer())) }

export const TaskCreated = Type.Object({
  ...Ids,
  type: TaskType,
  /** The address as resolved at creation (shipments' snapshot: `created` when this task made it). */
  address: AddressSnapshot,
  shipment_id: Nullable(Type.Integer()),
  workflow_id: Nullable(Type.Integer()),
  step_key: Nullable(Type.String()),
  assignee_id: Nullable(Type.String()),
  time_windows: Type.Array(TimeWindow),
  duration_minutes: Nullable(Type.Integer()),
  dependencies: Type.Array(Type.String()),
  requirements: Requirements,
  load: Load,
  notes: Nullable(Type.String()),
  external_reference: Nullable(Type.String()),
  created_at: Type.String(),
})
export type TaskCreated = Static<typeof TaskCreated>

/** `skipped`: recorded because a later step was taken directly (same time as that step). */
export const TaskStarted = Type.Object({ ...Ids, ...StepContext, started_at: Type.String(), skipped: Type.Optional(Type.Boolean()) })
export type TaskStarted = Static<typeof TaskStarted>

export const TaskArrived = Type.Object({ ...Ids, ...StepContext, arrived_at: Type.String(), skipped: Type.Optional(Type.Boolean()) })
export type TaskArrived = Static<typeof TaskArrived>

export const TaskCompleted = Type.Object({
  ...Ids,
  ...StepContext,
  signed_by: Nullable(Type.String()),
  notes: Nullable(Type.String()),
  barcode: Nullable(Type.String()),
  attachment_ids: Type.Array(Type.String()),
  completed_at: Type.String(),
})
export type TaskCompleted = Static<typeof TaskCompleted>

export const TaskFailed = Type.Object({
  ...Ids,
  ...StepContext,
  reason: FailureReason,
  notes: Nullable(Type.String()),
  signed_by: Nullable(Type.String()),
  barcode: Nullable(Type.String()),
  attachment_ids: Type.Array(Type.String()),
  failed_at: Type.String(),
})
export type TaskFailed = Static<typeof TaskFailed>

export const TaskCancelled = Type.Object({ ...Ids, ...StepContext, reason: Nullable(Type.String()), cancelled_at: Type.String() })
export type TaskCancelled = Static<typeof TaskCancelled>

/** Proof of delivery: the bytes are in the blob store under `blob_key`. */
export const TaskAttachmentAdded = Type.Object({
  ...Ids,
  id: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
  blob_key: Type.String(),
  description: Nullable(Type.String()),
  uploaded_by: Type.String(),
  uploaded_at: Type.String(),
})
export type TaskAttachmentAdded = Static<typeof TaskAttachmentAdded>

/**
 * The task module's events of a `task-<ulid>` stream (event-map.ts: the union, the names and projections'
 * typed batches derive from it). The same stream also holds the routes module's markers
 * (`TaskRouteMarkers`, routes.ts) and the ETA engine's `TaskDelayEvents` (task-delays.ts).
 */
export const TaskEvents = {
  TaskCreated, TaskStarted, TaskArrived, TaskCompleted, TaskFailed, TaskCancelled, TaskAttachmentAdded,
} as const
