import { Type, type Static } from 'typebox'
import { ListingCursor, Nullable, Page, pageQuery } from './common.js'
import { AddressInput, PackageInput } from './shipments.js'
import { TaskStatus } from './tasks.js'
import { TaskType } from '../events/tasks.js'

export const WorkflowStatus = Type.Union([
  Type.Literal('new'), Type.Literal('scheduled'), Type.Literal('in_progress'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled'),
], { title: 'WorkflowStatus' })
export type WorkflowStatus = Static<typeof WorkflowStatus>

const Window = Type.Object({ from: Type.String({ format: 'date-time' }), to: Type.String({ format: 'date-time' }) }, { additionalProperties: false })

/** DESIGN §3.9: what a workflow's tasks are made from; with `shipment_id` the addresses and load are the shipment's. */
export const WorkflowData = Type.Object({
  shipment_id: Type.Optional(Type.Integer({ minimum: 1 })),
  origin: Type.Optional(AddressInput),
  destination: Type.Optional(AddressInput),
  packages: Type.Optional(Type.Array(PackageInput, { maxItems: 100 })),
  pickup_window: Type.Optional(Window),
  delivery_window: Type.Optional(Window),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
}, { title: 'WorkflowData', additionalProperties: false })

export const StartWorkflowBody = Type.Object({
  blueprint_id: Type.Optional(Type.Integer({ minimum: 1 })),
  blueprint_key: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  data: Type.Optional(WorkflowData),
}, { title: 'CreateWorkflowRequest', additionalProperties: false })
export type StartWorkflowBody = Static<typeof StartWorkflowBody>

export const WorkflowTask = Type.Object({ ulid: Type.String(), step_key: Type.String(), type: TaskType, status: TaskStatus }, { title: 'WorkflowTask' })

export const Workflow = Type.Object({
  id: Type.Integer(),
  status: WorkflowStatus,
  blueprint: Type.Object({ id: Type.Integer(), key: Type.String(), version: Type.Integer() }),
  data: Type.Record(Type.String(), Type.Unknown()),
  shipment_id: Nullable(Type.Integer()),
  tasks: Type.Array(WorkflowTask),
  /** Actions parked in the dead letters after their retries (the process manager's failures). */
  errors: Type.Array(Type.Object({ action_key: Type.String(), error: Type.String(), at: Type.String({ format: 'date-time' }) })),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  completed_at: Nullable(Type.String({ format: 'date-time' })),
  failed_at: Nullable(Type.String({ format: 'date-time' })),
  cancelled_at: Nullable(Type.String({ format: 'date-time' })),
}, { title: 'Workflow' })
export type Workflow = Static<typeof Workflow>

/** Spec: `POST /workflows` → `{success, workflow: {data: {...}}}`. */
export const CreatedWorkflow = Type.Object({ success: Type.Boolean(), workflow: Type.Object({ data: Workflow }) }, { title: 'CreatedWorkflow' })
/** Spec: `POST /workflows/{id}/cancel` → `{data: {workflow: {...}}}`. */
export const CancelledWorkflow = Type.Object({ data: Type.Object({ workflow: Workflow }) }, { title: 'CancelledWorkflow' })

export const WorkflowParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

export const WorkflowsQuery = Type.Object({
  status: Type.Optional(WorkflowStatus),
  blueprint_key: Type.Optional(Type.String({ maxLength: 64 })),
  shipment_id: Type.Optional(Type.Integer({ minimum: 1 })),
  cursor: ListingCursor,
  ...pageQuery(),
}, { additionalProperties: false })

export const WorkflowsPage = Page(Workflow, 'WorkflowsPage')
