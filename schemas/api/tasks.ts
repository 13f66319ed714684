import { NullableEta } from './etas.js'
import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, Page, pageQuery } from './common.js'
import { Address, AddressInput, Attachment } from './shipments.js'
import { FailureReason, Requirement, TaskType } from '../events/tasks.js'

// Routes API: tasks (DESIGN §3.9; spec "Task" states, "Routes API: tasks, workflows, routes").
// Bounds the design leaves open are in docs/decisions.md ("Tasks").

export const MAX_TIME_WINDOWS = 10
export const MAX_DEPENDENCIES = 50
export const MAX_DURATION_MINUTES = 24 * 60
export const MAX_LOAD = 1_000_000_000
export const MAX_ATTACHMENT_IDS = 20

export const TaskStatus = Type.Union([
  Type.Literal('pending'), Type.Literal('started'), Type.Literal('arrived'), Type.Literal('complete'), Type.Literal('failed'), Type.Literal('cancelled'),
], { title: 'TaskStatus' })
export type TaskStatus = Static<typeof TaskStatus>

const DateTime = Type.String({ format: 'date-time', maxLength: 40 })
const Ulid = Type.String({ pattern: '^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$', description: 'a task ulid' })
const Text = (max: number) => Type.Optional(Nullable(Type.String({ maxLength: max })))
const Count = Type.Integer({ minimum: 0, maximum: MAX_LOAD })

export const TimeWindowInput = Type.Object({ from: DateTime, to: DateTime }, { title: 'TimeWindowInput', additionalProperties: false })
/** A missing dimension is 0 (a vehicle's missing capacity dimension is unlimited: the two agree that it does not bind). */
export const LoadInput = Type.Object({
  grams: Type.Optional(Count), volume_cm3: Type.Optional(Count), packages: Type.Optional(Count),
}, { title: 'LoadInput', additionalProperties: false, description: 'what the task loads or unloads; a missing dimension is 0' })
const RequirementList = Type.Array(Requirement, { maxItems: 4, uniqueItems: true })
export const RequirementsInput = Type.Object({ complete: Type.Optional(RequirementList), fail: Type.Optional(RequirementList) }, { title: 'RequirementsInput', additionalProperties: false })

export const CreateTaskBody = Type.Object({
  type: TaskType,
  address: AddressInput,
  shipment_id: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
  assignee_id: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  time_windows: Type.Optional(Type.Array(TimeWindowInput, { maxItems: MAX_TIME_WINDOWS })),
  duration_minutes: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: MAX_DURATION_MINUTES }))),
  dependencies: Type.Optional(Type.Array(Ulid, { maxItems: MAX_DEPENDENCIES })),
  requirements: Type.Optional(RequirementsInput),
  load: Type.Optional(LoadInput),
  notes: Text(1000),
  external_reference: Text(50),
}, { title: 'CreateTaskRequest', additionalProperties: false })
export type CreateTaskBody = Static<typeof CreateTaskBody>

const AttachmentIds = Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_ATTACHMENT_IDS }))

export const CompleteTaskBody = Type.Union([Type.Object({
  signed_by: Text(100),
  notes: Text(1000),
  barcode: Text(64),
  attachment_ids: AttachmentIds,
}, { additionalProperties: false }), Type.Null()], { title: 'CompleteTaskRequest' })

export const FailTaskBody = Type.Object({
  reason: FailureReason,
  notes: Text(1000),
  signed_by: Text(100),
  barcode: Text(64),
  attachment_ids: AttachmentIds,
}, { title: 'FailTaskRequest', additionalProperties: false })

export const CancelTaskBody = Type.Union([Type.Object({ reason: Text(255) }, { additionalProperties: false }), Type.Null()], { title: 'CancelTaskRequest' })

export const TaskParams = Type.Object({ ulid: Type.String({ maxLength: 64 }) })
export const TaskAttachmentParams = Type.Object({ ulid: Type.String({ maxLength: 64 }), attachment_id: Type.String({ maxLength: 64 }) })

export const TasksQuery = Type.Object({
  status: Type.Optional(TaskStatus),
  type: Type.Optional(TaskType),
  route_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  assignee_id: Type.Optional(Type.String({ maxLength: 64 })),
  workflow_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  shipment_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  shift_date: Type.Optional(Type.String({ format: 'date', description: 'tasks with a time window on this date (UTC)' })),
  cursor: ListingCursor,
  ...pageQuery(),
}, { additionalProperties: false })

const Time = Nullable(Type.String({ format: 'date-time' }))

export const Task = Type.Object({
  ulid: Type.String(),
  type: TaskType,
  status: TaskStatus,
  address: Address,
  shipment_id: Nullable(Type.Integer()),
  workflow_id: Nullable(Type.Integer()),
  step_key: Nullable(Type.String()),
  assignee: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
  route_id: Nullable(Type.Integer()),
  position: Nullable(Type.Integer()),
  time_windows: Type.Array(Type.Object({ from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) })),
  duration_minutes: Nullable(Type.Integer()),
  dependencies: Type.Array(Type.String()),
  requirements: Type.Object({ complete: Type.Array(Requirement), fail: Type.Array(Requirement) }),
  load: Type.Object({ grams: Type.Integer(), volume_cm3: Type.Integer(), packages: Type.Integer() }),
  signed_by: Nullable(Type.String()),
  failure_reason: Nullable(FailureReason),
  notes: Nullable(Type.String()),
  attachments: Type.Array(Attachment),
  started_at: Time,
  arrived_at: Time,
  completed_at: Time,
  failed_at: Time,
  cancelled_at: Time,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  /** DESIGN §3.10: the live ETA while the task waits on a started route. */
  eta: NullableEta,
}, { title: 'Task' })
export type Task = Static<typeof Task>

export const TaskEnvelope = Type.Object({ success: Type.Boolean(), task: Task }, { title: 'TaskEnvelope' })
export const TasksPage = Page(Task, 'TasksPage')
export const TaskAttachmentEnvelope = Type.Object({ success: Type.Boolean(), attachment: Attachment }, { title: 'TaskAttachmentEnvelope' })
export const TaskAttachments = Type.Object({ attachments: Type.Array(Attachment) }, { title: 'TaskAttachments' })
