import type { Step } from '../../schemas/api/blueprints.js'
import type { TaskCreated } from '../../schemas/events/tasks.js'
import type { WorkflowCreated } from '../../schemas/events/workflows.js'
import type { DecidedAppend } from '../shared/command-handler.js'
import { ulidFromKey } from '../shared/ids.js'
import { stream } from '../../schemas/events/streams.js'

/**
 * The TaskCreated of a step's task (DESIGN §3.9): the address from the workflow's origin or
 * destination or the step's fixed address, the time window from the data, the step's duration and
 * requirements, dependencies on the latest tasks of its `depends_on` steps. Null when the address
 * it names is missing (the start refuses that; a later version cannot be trusted blindly).
 */
export function stepTask(
  wf: WorkflowCreated, step: Step, ulid: string, dependencies: string[], now: Date,
): TaskCreated | null {
  const spec = step.task.address
  const address = spec === 'origin' ? wf.origin : spec === 'destination' ? wf.destination : wf.step_addresses[step.key] ?? null
  if (!address) return null
  const window = step.task.time_window === 'pickup_window' ? wf.pickup_window : step.task.time_window === 'delivery_window' ? wf.delivery_window : null
  return {
    ulid, organization_id: wf.organization_id, type: step.task.type, address, shipment_id: wf.shipment_id, workflow_id: wf.workflow_id,
    step_key: step.key, assignee_id: null, time_windows: window ? [window] : [], duration_minutes: step.task.duration_minutes ?? null,
    dependencies, requirements: { complete: [...new Set(step.requirements?.complete ?? [])], fail: [...new Set(step.requirements?.fail ?? [])] },
    load: wf.load, notes: wf.notes, external_reference: null, created_at: now.toISOString(),
  }
}

/**
 * The task an action makes: its ulid derived from the action's key and the time its cause was
 * stored (the same on every redelivery, so a repeat names the same stream and makes no second one).
 */
export const actionTask = (wf: WorkflowCreated, step: Step, actionKey: string, causeAt: Date, dependencies: string[], now: Date): TaskCreated | null =>
  stepTask(wf, step, ulidFromKey(actionKey, causeAt), dependencies, now)

/**
 * A step's task as written beside the workflow's record of it, in one append: its TaskCreated on a
 * stream that must not exist yet. That is the whole rule of a task's creation (the tasks module's
 * CreateTask decides the same on a new stream), so a repeat of the action names the same stream
 * and makes no second task.
 */
export const newTaskStream = (task: TaskCreated): DecidedAppend =>
  ({ streamId: stream.task(task.ulid), events: [{ type: 'TaskCreated', data: task }], expected: 'no_stream' })
