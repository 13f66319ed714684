import { Type, type Static } from 'typebox'
import { AddressSnapshot } from './shipments.js'
import { Load, TimeWindow } from './tasks.js'

// Event payloads of the workflow stream `workflow-<id>`, version 1 (DESIGN §1: upcast on read, never rewritten).
// Every payload names its workflow and organization, so a consumer (organization webhooks) needs nothing else.

const Ids = { workflow_id: Type.Integer(), organization_id: Type.String() }
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

export const BlueprintRef = Type.Object({ id: Type.Integer(), key: Type.String(), version: Type.Integer() })
export type BlueprintRef = Static<typeof BlueprintRef>

/**
 * The workflow and what its steps' tasks are made from, resolved once at the start: a later task
 * (a retry days later) uses the same addresses and load, whatever happened to the inputs since.
 */
export const WorkflowCreated = Type.Object({
  ...Ids,
  blueprint: BlueprintRef,
  /** The request's `data`, as given (what GET shows). */
  data: Type.Record(Type.String(), Type.Unknown()),
  shipment_id: Nullable(Type.Integer()),
  origin: Nullable(AddressSnapshot),
  destination: Nullable(AddressSnapshot),
  pickup_window: Nullable(TimeWindow),
  delivery_window: Nullable(TimeWindow),
  load: Load,
  /** The fixed AddressInput of steps that have one, resolved at the start: step key → snapshot. */
  step_addresses: Type.Record(Type.String(), AddressSnapshot),
  notes: Nullable(Type.String()),
  /** Set when another workflow's `start_workflow` action made this one (its idempotency key). */
  started_by: Nullable(Type.String()),
  created_at: Type.String(),
})
export type WorkflowCreated = Static<typeof WorkflowCreated>

/** A task of a step was made (in the same atomic write as its TaskCreated). `action_key` null: a start step. */
export const WorkflowTaskCreated = Type.Object({
  ...Ids,
  ulid: Type.String(),
  step_key: Type.String(),
  attempt: Type.Integer(),
  action_key: Nullable(Type.String()),
  /** Made by a `retry`: the rest of the step's action list is skipped. */
  retry: Type.Boolean(),
  created_at: Type.String(),
})
export type WorkflowTaskCreated = Static<typeof WorkflowTaskCreated>

/**
 * An action that made no task ran (or was passed over): its key is spent. `stop`: the rest of the
 * step's list is skipped (a retry that made its task records WorkflowTaskCreated with stop in state).
 */
export const WorkflowActionTaken = Type.Object({
  ...Ids,
  action_key: Type.String(),
  do: Type.String(),
  /** e.g. `done`, `skipped: no shipment`, `retries spent`, or the id of a started workflow. */
  outcome: Type.String(),
  at: Type.String(),
})
export type WorkflowActionTaken = Static<typeof WorkflowActionTaken>

/** `emit_event`: goes out to the organization's webhooks as `custom.<event>`. */
export const WorkflowEventEmitted = Type.Object({ ...Ids, action_key: Type.String(), event: Type.String(), at: Type.String() })
export type WorkflowEventEmitted = Static<typeof WorkflowEventEmitted>

export const WorkflowScheduled = Type.Object({ ...Ids, scheduled_at: Type.String() })
export type WorkflowScheduled = Static<typeof WorkflowScheduled>

/** A task of the workflow started: in_progress. */
export const WorkflowProgressed = Type.Object({ ...Ids, task_ulid: Type.String(), started_at: Type.String() })
export type WorkflowProgressed = Static<typeof WorkflowProgressed>

export const WorkflowCompleted = Type.Object({ ...Ids, action_key: Type.String(), completed_at: Type.String() })
export type WorkflowCompleted = Static<typeof WorkflowCompleted>

export const WorkflowFailed = Type.Object({ ...Ids, action_key: Type.String(), failed_at: Type.String() })
export type WorkflowFailed = Static<typeof WorkflowFailed>

export const WorkflowCancelled = Type.Object({ ...Ids, cancelled_at: Type.String() })
export type WorkflowCancelled = Static<typeof WorkflowCancelled>

/** An action that kept failing went to the dead letters: shown on the workflow (`errors`). */
export const WorkflowActionParked = Type.Object({ ...Ids, action_key: Type.String(), error: Type.String(), attempts: Type.Integer(), at: Type.String() })
export type WorkflowActionParked = Static<typeof WorkflowActionParked>

/** Stream `workflow-start-<hash of the action key>`: a `start_workflow` action starts one workflow only. */
export const WorkflowStartReserved = Type.Object({ action_key: Type.String(), workflow_id: Type.Integer() })
export type WorkflowStartReserved = Static<typeof WorkflowStartReserved>

/** The events of a `workflow-<id>` stream (event-map.ts: the union, the names and projections' typed batches derive from it). */
export const WorkflowEvents = {
  WorkflowCreated, WorkflowTaskCreated, WorkflowActionTaken, WorkflowEventEmitted, WorkflowScheduled, WorkflowProgressed,
  WorkflowCompleted, WorkflowFailed, WorkflowCancelled, WorkflowActionParked,
} as const

/** The event of a `workflow-start-<hash>` stream. */
export const WorkflowStartEvents = { WorkflowStartReserved } as const
