import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { actionKey, fold, pendingActions, type WorkflowEvent } from '../../src/workflows/workflow.js'
import { decider as startWorkflow } from '../../src/workflows/start-workflow.js'
import { decider as cancelWorkflow } from '../../src/workflows/cancel-workflow.js'
import { decider as markScheduled } from '../../src/workflows/mark-scheduled.js'
import { decider as markInProgress } from '../../src/workflows/mark-in-progress.js'
import { decider as completeWorkflow } from '../../src/workflows/complete-workflow.js'
import { decider as takeAction } from '../../src/workflows/take-action.js'
import { decider as recordTask } from '../../src/workflows/record-task.js'
import { DEFAULT_BLUEPRINTS } from '../../src/blueprints/default-blueprints.js'
import { IllegalStateError, NotFoundError } from '../../src/shared/errors.js'
import type { WorkflowCreated, WorkflowTaskCreated } from '../../schemas/events/workflows.js'

// Given events / when command / then events (or error), no database; and the plan of actions.

const now = new Date('2026-11-25T09:00:00Z')
const at = now.toISOString()
const ids = { workflow_id: 7, organization_id: 'org_1' }
const createdData: WorkflowCreated = {
  ...ids, blueprint: { id: 1, key: 'delivery', version: 1 }, data: {}, shipment_id: null, origin: null, destination: null,
  pickup_window: null, delivery_window: null, load: { grams: 0, volume_cm3: 0, packages: 0 }, step_addresses: {}, notes: null, started_by: null, created_at: at,
}
const task = (ulid: string, step: string, attempt: number, key: string | null, retry = false): WorkflowTaskCreated =>
  ({ ...ids, ulid, step_key: step, attempt, action_key: key, retry, created_at: at })
const created: WorkflowEvent = { type: 'WorkflowCreated', data: createdData }
const first: WorkflowEvent = { type: 'WorkflowTaskCreated', data: task('T1', 'delivery', 1, null) }
const cancelled: WorkflowEvent = { type: 'WorkflowCancelled', data: { ...ids, cancelled_at: at } }
const spec = {
  start: DeciderSpecification.for(startWorkflow), cancel: DeciderSpecification.for(cancelWorkflow),
  scheduled: DeciderSpecification.for(markScheduled), inProgress: DeciderSpecification.for(markInProgress),
  complete: DeciderSpecification.for(completeWorkflow), take: DeciderSpecification.for(takeAction), recordTask: DeciderSpecification.for(recordTask),
}
const k = (step: string, attempt: number, i: number) => actionKey(7, step, attempt, i)

t.test('start: the workflow and its start tasks; a second start is refused', async (t) => {
  spec.start.given([]).when({ type: 'StartWorkflow', data: { created: createdData, tasks: [first.data as WorkflowTaskCreated] } }).then(t, [created, first])
  spec.start.given([created]).when({ type: 'StartWorkflow', data: { created: createdData, tasks: [] } }).thenThrows(t, IllegalStateError, { code: 'workflow_exists' })
})

t.test('states: new → scheduled → in_progress → completed; only forward', async (t) => {
  const sd = { ...ids, scheduled_at: at }
  const pd = { ...ids, task_ulid: 'T1', started_at: at }
  const cd = { ...ids, action_key: k('delivery', 1, 1), completed_at: at }
  const scheduled: WorkflowEvent = { type: 'WorkflowScheduled', data: sd }
  const progressed: WorkflowEvent = { type: 'WorkflowProgressed', data: pd }
  spec.scheduled.given([created, first]).when({ type: 'MarkScheduled', data: sd }).then(t, [scheduled])
  spec.inProgress.given([created, first, scheduled]).when({ type: 'MarkInProgress', data: pd }).then(t, [progressed])
  spec.scheduled.given([created, first, progressed]).when({ type: 'MarkScheduled', data: sd }).thenNothingHappened(t)
  spec.inProgress.given([created, first, progressed]).when({ type: 'MarkInProgress', data: pd }).thenNothingHappened(t)
  const completed: WorkflowEvent = { type: 'WorkflowCompleted', data: cd }
  spec.complete.given([created, first, progressed]).when({ type: 'CompleteWorkflow', data: cd }).then(t, [completed])
  spec.inProgress.given([created, first, completed]).when({ type: 'MarkInProgress', data: pd }).thenNothingHappened(t)
})

t.test('cancel: from any open state; a final workflow is immutable (409); another tenant\'s is unknown', async (t) => {
  const cancel = { type: 'CancelWorkflow' as const, data: { organization_id: 'org_1', now } }
  spec.cancel.given([created, first]).when(cancel).then(t, [cancelled])
  spec.cancel.given([created, first, cancelled]).when(cancel).thenThrows(t, IllegalStateError, { code: 'workflow_final' })
  spec.cancel.given([created, first, { type: 'WorkflowFailed', data: { ...ids, action_key: 'x', failed_at: at } }]).when(cancel).thenThrows(t, IllegalStateError, { code: 'workflow_final' })
  spec.cancel.given([created]).when({ type: 'CancelWorkflow', data: { organization_id: 'org_2', now } }).thenThrows(t, NotFoundError)
  spec.cancel.given([]).when(cancel).thenThrows(t, NotFoundError)
})

t.test('actions: recorded once per key; nothing after cancel', async (t) => {
  const taken = { ...ids, action_key: k('delivery', 1, 0), do: 'set_shipment_status', outcome: 'done', at }
  spec.take.given([created, first]).when({ type: 'TakeAction', data: taken }).then(t, [{ type: 'WorkflowActionTaken', data: taken }])
  spec.take.given([created, first, { type: 'WorkflowActionTaken', data: taken }]).when({ type: 'TakeAction', data: taken }).thenNothingHappened(t)
  spec.take.given([created, first, cancelled]).when({ type: 'TakeAction', data: taken }).thenThrows(t, IllegalStateError, { code: 'workflow_final' })
  const retry = { ...task('T2', 'delivery', 2, k('delivery', 1, 1), true), action_key: k('delivery', 1, 1) }
  spec.recordTask.given([created, first, cancelled]).when({ type: 'RecordTask', data: retry }).thenThrows(t, IllegalStateError, { code: 'workflow_final' })
})

t.test('the plan: the default delivery blueprint\'s fail list, retry then the rest once spent', async (t) => {
  const steps = DEFAULT_BLUEPRINTS.find((b) => b.key === 'delivery')!.steps
  const plan = (events: WorkflowEvent[], ulid: string, outcome: 'complete' | 'failed') => pendingActions(fold(events), steps, ulid, outcome).map((p) => [p.key, p.action.do])
  t.same(plan([created, first], 'T1', 'complete'), [[k('delivery', 1, 0), 'set_shipment_status'], [k('delivery', 1, 1), 'complete_workflow']])
  t.same(plan([created, first], 'T1', 'failed').map((p) => p[1]), ['set_shipment_status', 'retry', 'set_shipment_status', 'fail_workflow'])
  // The retry made attempt 2: the rest of attempt 1's list is skipped for good.
  const second: WorkflowEvent = { type: 'WorkflowTaskCreated', data: task('T2', 'delivery', 2, k('delivery', 1, 1), true) }
  const status0: WorkflowEvent = { type: 'WorkflowActionTaken', data: { ...ids, action_key: k('delivery', 1, 0), do: 'set_shipment_status', outcome: 'skipped', at } }
  t.same(plan([created, first, status0, second], 'T1', 'failed'), [], 'attempt 1 is done')
  t.same(plan([created, first, status0, second], 'T2', 'failed')[0], [k('delivery', 2, 0), 'set_shipment_status'], 'attempt 2 has its own keys')
  t.same(plan([created, first, cancelled], 'T1', 'failed'), [], 'nothing after cancel')
  t.same(plan([created, first], 'UNKNOWN', 'failed'), [], 'a task of no step of this workflow')
})
