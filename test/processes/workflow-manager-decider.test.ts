import t from 'tap'
import { ReactionSpecification } from '../helpers/reaction-specification.js'
import {
  decider, workflowManager, type WorkflowManagerCommand, type WorkflowManagerInput,
} from '../../src/processes/workflow-manager.js'
import { send as sendAny } from '../../src/processes/reaction.js'
import { actionKey } from '../../src/workflows/workflow.js'
import { ulidFromKey } from '../../src/shared/ids.js'
import type { Step } from '../../schemas/api/blueprints.js'
import type { WorkflowCreated, WorkflowTaskCreated } from '../../schemas/events/workflows.js'
import type { AddressSnapshot } from '../../schemas/events/shipments.js'
import type { TaskCreated } from '../../schemas/events/tasks.js'

// Given the streams its load step reads (a task's, the workflow's, the blueprint's) / when a task
// event / then the commands it sends, in order. No database: "task completed → next task" is decided here.

const now = new Date('2026-11-29T09:00:00Z')
const at = now.toISOString()
const storedAt = new Date('2026-11-29T08:59:59.123Z')
const ids = { workflow_id: 7, organization_id: 'org_1' }
const spec = ReactionSpecification.for(decider)
const send = (command: WorkflowManagerCommand) => sendAny(command)
const k = (step: string, attempt: number, i: number) => actionKey(7, step, attempt, i)
const reaction = workflowManager()

const origin = { city: { name: 'Rosario' } } as unknown as AddressSnapshot
const createdData: WorkflowCreated = {
  ...ids, blueprint: { id: 3, key: 'chain', version: 2 }, data: { note: 'x' }, shipment_id: null, origin, destination: null,
  pickup_window: null, delivery_window: null, load: { grams: 1, volume_cm3: 1, packages: 1 }, step_addresses: {}, notes: null, started_by: null, created_at: at,
}
const wfCreated = { type: 'WorkflowCreated' as const, data: createdData }
const wfTask = (ulid: string, step: string, attempt: number, key: string | null, retry = false) =>
  ({ type: 'WorkflowTaskCreated' as const, data: { ...ids, ulid, step_key: step, attempt, action_key: key, retry, created_at: at } satisfies WorkflowTaskCreated })
const emitted = (key: string, event: string) => ({ type: 'WorkflowEventEmitted' as const, data: { ...ids, action_key: key, event, at } })
const progressed = { type: 'WorkflowProgressed' as const, data: { ...ids, task_ulid: 'A1', started_at: at } }
const cancelled = { type: 'WorkflowCancelled' as const, data: { ...ids, cancelled_at: at } }

const service = { type: 'service' as const, address: 'origin' as const }
const steps: Step[] = [
  { key: 'a', name: 'A', task: service, on_complete: [{ do: 'emit_event', event: 'a_done' }, { do: 'create_task', step: 'b' }, { do: 'emit_event', event: 'b_made' }], on_fail: [{ do: 'retry', max_attempts: 2 }, { do: 'fail_workflow' }] },
  { key: 'b', name: 'B', task: service, depends_on: ['a'], on_complete: [{ do: 'complete_workflow' }, { do: 'emit_event', event: 'never' }] },
]
const blueprint = (version: number, s: Step[]) => version === 1
  ? { type: 'BlueprintCreated' as const, data: { id: 3, organization_id: 'org_1', key: 'chain', name: 'Chain', default: false, version, steps: s, start_steps: ['a'], created_at: at } }
  : { type: 'BlueprintDrafted' as const, data: { version, name: 'Chain', steps: s, start_steps: ['a'], drafted_at: at } }
/** Version 1 had other steps; the workflow started with version 2. */
const published = [blueprint(1, [{ key: 'a', name: 'A', task: service, on_complete: [{ do: 'fail_workflow' }] }]), blueprint(2, steps)]

let n = 0
const taskEvent = <T extends WorkflowManagerInput['type']>(type: T, data: Record<string, unknown>, ulid = 'A1'): WorkflowManagerInput =>
  ({ id: `ev-${++n}`, streamId: `task-${ulid}`, streamVersion: 3, recordedAt: storedAt, type, data: { ulid, organization_id: 'org_1', ...data } }) as WorkflowManagerInput
/** `unnamed`: a step written before steps named their workflow. */
const completed = (ulid = 'A1', workflow_id: number | null | 'unnamed' = 7) =>
  taskEvent('TaskCompleted', { ...(workflow_id !== 'unnamed' ? { workflow_id } : {}), signed_by: 'Ana', notes: null, barcode: null, attachment_ids: [], completed_at: '2026-11-29T08:59:00Z' }, ulid)
const failed = (ulid = 'A1') =>
  taskEvent('TaskFailed', { workflow_id: 7, reason: 'no_answer', notes: null, signed_by: null, barcode: null, attachment_ids: [], failed_at: '2026-11-29T08:59:00Z' }, ulid)
const input = (message: WorkflowManagerInput) => ({ message, now })

const taskOf = (ulid: string, step: Step, dependencies: string[]): TaskCreated => ({
  ulid, organization_id: 'org_1', type: 'service', address: origin, shipment_id: null, workflow_id: 7, step_key: step.key, assignee_id: null,
  time_windows: [], duration_minutes: null, dependencies, requirements: { complete: [], fail: [] }, load: createdData.load, notes: null,
  external_reference: null, created_at: at,
})
const makeB = (attempt = 1) => {
  const ulid = ulidFromKey(k('a', 1, 1), storedAt)
  return send({
    type: 'RecordStepTask',
    data: { record: { ...ids, ulid, step_key: 'b', attempt, action_key: k('a', 1, 1), retry: false, created_at: at }, task: taskOf(ulid, steps[1]!, ['A1']) },
  })
}

t.test('task completed → next task: the step\'s actions in order, the first with the start it stands for, the task made from the key', async (t) => {
  const start = { ...ids, task_ulid: 'A1', started_at: '2026-11-29T08:59:00Z' }
  spec.given([wfCreated, wfTask('A1', 'a', 1, null), ...published]).when(input(completed())).then(t, [
    { action: 'Send', message: { type: 'EmitEvent', data: { ...ids, action_key: k('a', 1, 0), event: 'a_done', at }, progress: start } },
    makeB(),
    send({ type: 'EmitEvent', data: { ...ids, action_key: k('a', 1, 2), event: 'b_made', at } }),
  ])
  const quiet: Step[] = [{ key: 'a', name: 'A', task: service }]
  spec.given([wfCreated, wfTask('A1', 'a', 1, null), blueprint(1, []), blueprint(2, quiet)]).when(input(completed()))
    .then(t, [send({ type: 'MarkInProgress', data: start })], 'no action: the start alone')
  spec.given([wfCreated, wfTask('A1', 'a', 1, null), progressed, blueprint(1, []), blueprint(2, quiet)]).when(input(completed())).thenIgnores(t, /nothing left/)
})

t.test('a crash between two actions resumes at the first unspent key; a redelivery sends nothing', async (t) => {
  const history = [wfCreated, wfTask('A1', 'a', 1, null), progressed, emitted(k('a', 1, 0), 'a_done'), ...published]
  spec.given(history).when(input(completed())).then(t, [makeB(), send({ type: 'EmitEvent', data: { ...ids, action_key: k('a', 1, 2), event: 'b_made', at } })])
  const b = ulidFromKey(k('a', 1, 1), storedAt)
  spec.given([...history, wfTask(b, 'b', 1, k('a', 1, 1)), emitted(k('a', 1, 2), 'b_made')]).when(input(completed())).thenIgnores(t, /nothing left/)
})

t.test('a failure: a retry with attempts left makes the step\'s next attempt and stops the list; spent, the list goes on', async (t) => {
  const retried = (attempt: number) => {
    const key = k('a', attempt - 1, 0)
    const ulid = ulidFromKey(key, storedAt)
    return send({
      type: 'RecordStepTask',
      data: { record: { ...ids, ulid, step_key: 'a', attempt, action_key: key, retry: true, created_at: at }, task: taskOf(ulid, steps[0]!, []) },
    })
  }
  spec.given([wfCreated, wfTask('A1', 'a', 1, null), progressed, ...published]).when(input(failed())).then(t, [retried(2)])
  spec.given([wfCreated, wfTask('A1', 'a', 1, null), progressed, wfTask('A2', 'a', 2, k('a', 1, 0), true), ...published]).when(input(failed('A2'))).then(t, [
    send({ type: 'TakeAction', data: { ...ids, action_key: k('a', 2, 0), at, do: 'retry', outcome: 'retries spent' } }),
    send({ type: 'FailWorkflow', data: { ...ids, action_key: k('a', 2, 1), failed_at: at } }),
  ])
})

t.test('an end stops the list; a final workflow runs nothing', async (t) => {
  const b = ulidFromKey(k('a', 1, 1), storedAt)
  const history = [wfCreated, wfTask('A1', 'a', 1, null), progressed, wfTask(b, 'b', 1, k('a', 1, 1)), ...published]
  spec.given(history).when(input(completed(b))).then(t, [send({ type: 'CompleteWorkflow', data: { ...ids, action_key: k('b', 1, 0), completed_at: at } })])
  spec.given([...history, cancelled]).when(input(completed(b))).thenIgnores(t, /nothing left/)
})

t.test('effects: cancel the other tasks, start a workflow, a shipment status (or skipped without a shipment)', async (t) => {
  const effects: Step[] = [{
    key: 'a', name: 'A', task: service,
    on_complete: [{ do: 'cancel_remaining_tasks' }, { do: 'start_workflow', blueprint_key: 'other' }, { do: 'set_shipment_status', status: 'delivered' }],
  }]
  const base = (i: number) => ({ ...ids, action_key: k('a', 1, i), at })
  const given = [wfCreated, wfTask('A1', 'a', 1, null), wfTask('X1', 'x', 1, null), progressed, blueprint(1, []), blueprint(2, effects)]
  spec.given(given).when(input(completed())).then(t, [
    send({ type: 'CancelRemainingTasks', data: { ...base(0), do: 'cancel_remaining_tasks', task_ulids: ['X1'] } }),
    send({ type: 'StartWorkflow', data: { ...base(1), do: 'start_workflow', blueprint_key: 'other', data: { note: 'x' } } }),
    send({ type: 'TakeAction', data: { ...base(2), do: 'set_shipment_status', outcome: 'skipped: no shipment' } }),
  ])
  const withShipment = { ...wfCreated, data: { ...createdData, shipment_id: 42 } }
  spec.given([withShipment, ...given.slice(1)]).when(input(failed())).thenIgnores(t, /nothing left/, 'no on_fail list')
  spec.given([withShipment, ...given.slice(1)]).when(input(completed())).then(t, [
    send({ type: 'CancelRemainingTasks', data: { ...base(0), do: 'cancel_remaining_tasks', task_ulids: ['X1'] } }),
    send({ type: 'StartWorkflow', data: { ...base(1), do: 'start_workflow', blueprint_key: 'other', data: { note: 'x' } } }),
    send({
      type: 'SetShipmentStatus',
      data: { ...base(2), do: 'set_shipment_status', shipment_id: 42, status: 'delivered', substatus: null, signed_by: 'Ana', reason: null, occurred_at: '2026-11-29T08:59:00Z' },
    }),
  ])
})

t.test('a start moves the workflow to in_progress, only forward; a skipped one, or a task of no workflow, is nothing to do', async (t) => {
  const started = taskEvent('TaskStarted', { workflow_id: 7, started_at: '2026-11-29T08:00:00Z' })
  spec.given([wfCreated, wfTask('A1', 'a', 1, null)]).when(input(started))
    .then(t, [send({ type: 'MarkInProgress', data: { ...ids, task_ulid: 'A1', started_at: '2026-11-29T08:00:00Z' } })])
  spec.given([wfCreated, wfTask('A1', 'a', 1, null)]).when(input(taskEvent('TaskArrived', { workflow_id: 7, arrived_at: '2026-11-29T08:30:00Z' })))
    .then(t, [send({ type: 'MarkInProgress', data: { ...ids, task_ulid: 'A1', started_at: '2026-11-29T08:30:00Z' } })])
  spec.given([wfCreated, wfTask('A1', 'a', 1, null), progressed]).when(input(started)).thenIgnores(t, /only forward/)
  spec.given([wfCreated]).when(input(taskEvent('TaskStarted', { workflow_id: 7, started_at: at, skipped: true }))).thenIgnores(t, /skipped/)
  spec.given([]).when(input(completed('A1', null))).thenIgnores(t, /not a task of a workflow/)
  spec.given([]).when(input(completed())).thenIgnores(t, /not recorded/)
})

t.test('an older step names no workflow: its task\'s TaskCreated does', async (t) => {
  const created = { type: 'TaskCreated' as const, data: { ...taskOf('A1', steps[0]!, []), workflow_id: 7 } }
  spec.given([created, wfCreated, wfTask('A1', 'a', 1, null), progressed, emitted(k('a', 1, 0), 'a_done'), ...published]).when(input(completed('A1', 'unnamed')))
    .then(t, [makeB(), send({ type: 'EmitEvent', data: { ...ids, action_key: k('a', 1, 2), event: 'b_made', at } })])
  spec.given([{ ...created, data: { ...created.data, workflow_id: null } }]).when(input(completed('A1', 'unnamed'))).thenIgnores(t, /not a task of a workflow/)
})

t.test('a task routed: scheduled once every open task of a new workflow is on a route or assigned with a window', async (t) => {
  const routed = (ulid: string) => ({ type: 'TaskRouted' as const, data: { ulid, organization_id: 'org_1', route_id: 5, routed_at: at } })
  const taskCreated = (ulid: string, assigned = false) => ({
    type: 'TaskCreated' as const,
    data: { ...taskOf(ulid, steps[0]!, []), ...(assigned ? { assignee_id: 'drv', time_windows: [{ from: at, to: at }] } : {}) },
  })
  const message = taskEvent('TaskRouted', { route_id: 5, routed_at: at }, 'A1')
  const workflow = [wfCreated, wfTask('A1', 'a', 1, null), wfTask('B1', 'b', 1, null)]
  const scheduled = send({ type: 'MarkScheduled', data: { ...ids, scheduled_at: at } })
  spec.given([taskCreated('A1'), routed('A1'), ...workflow, taskCreated('B1')]).when(input(message)).thenIgnores(t, /not scheduled yet/)
  spec.given([taskCreated('A1'), routed('A1'), ...workflow, taskCreated('B1'), routed('B1')]).when(input(message)).then(t, [scheduled])
  spec.given([taskCreated('A1'), routed('A1'), ...workflow, taskCreated('B1', true)]).when(input(message)).then(t, [scheduled], 'assigned with a window')
  const failedB = { type: 'TaskFailed' as const, data: { ulid: 'B1', organization_id: 'org_1', reason: 'other' as const, notes: null, signed_by: null, barcode: null, attachment_ids: [], failed_at: at } }
  spec.given([taskCreated('A1'), routed('A1'), ...workflow, taskCreated('B1'), failedB]).when(input(message)).then(t, [scheduled], 'a final task is not waited for')
  spec.given([taskCreated('A1'), routed('A1'), ...workflow, progressed, taskCreated('B1'), routed('B1')]).when(input(message)).thenIgnores(t, /in_progress/)
})

t.test('the load step: the workflow the step names (else the task\'s stream), then its blueprint, or every task of it', async (t) => {
  const state = (...events: Parameters<typeof decider.evolve>[1][]) => events.reduce(decider.evolve, decider.initialState())
  t.same(reaction.load(completed()), { stream: 'workflow-7' })
  t.same(reaction.load(completed('A1', null)), null, 'no workflow: nothing read')
  t.same(reaction.load(completed('A1', 'unnamed')), { stream: 'task-A1' }, 'an older step: its task first')
  t.same(reaction.load(taskEvent('TaskStarted', { workflow_id: 7, started_at: at, skipped: true })), null, 'a skipped start reads nothing')
  t.same(reaction.loadNext!(completed(), state(wfCreated)), [{ stream: 'workflow-7' }, { stream: 'blueprint-3' }])
  t.same(reaction.loadNext!(completed(), state()), [{ stream: 'workflow-7' }], 'no workflow recorded: no blueprint')
  const routedMsg = taskEvent('TaskRouted', { route_id: 5, routed_at: at }, 'A1')
  const taskA = { type: 'TaskCreated' as const, data: taskOf('A1', steps[0]!, []) }
  t.same(reaction.load(routedMsg), { stream: 'task-A1' })
  t.same(reaction.loadNext!(routedMsg, state(taskA)), [{ stream: 'workflow-7' }])
  t.same(reaction.loadNext!(routedMsg, state(taskA, wfCreated, wfTask('A1', 'a', 1, null), wfTask('B1', 'b', 1, null))),
    [{ stream: 'workflow-7' }, { stream: 'task-A1' }, { stream: 'task-B1' }])
  t.same(reaction.loadNext!(routedMsg, state(taskA, wfCreated, progressed)), [{ stream: 'workflow-7' }], 'past new: no task read')
})

t.test('the last delivery failed: the failing action parked on the workflow, under its key', async (t) => {
  const history = [wfCreated, wfTask('A1', 'a', 1, null), progressed, ...published].reduce(decider.evolve, decider.initialState())
  const failing: WorkflowManagerCommand = { type: 'StartWorkflow', data: { ...ids, action_key: k('a', 1, 1), at, do: 'start_workflow', blueprint_key: 'o', data: {} } }
  const message = completed()
  t.same(reaction.giveUp!(input(message), history, { command: failing, error: new Error('origin missing'), attempts: 6 }), [
    send({ type: 'ParkAction', data: { ...ids, action_key: k('a', 1, 1), error: 'origin missing', attempts: 6, at } }),
  ])
  t.match(reaction.giveUp!(input(message), history, { command: null, error: 'boom', attempts: 6 }), [{ message: { data: { action_key: `workflow:7:event:${message.id}` } } }])
  t.same(reaction.giveUp!(input(message), decider.initialState(), { command: null, error: 'boom', attempts: 6 }), [], 'no workflow: nothing to park on')
  const start = { ...ids, task_ulid: 'A1', started_at: at }
  t.match(reaction.giveUp!(input(message), history, { command: { ...failing, progress: start }, error: 'boom', attempts: 6 }),
    [{ message: { type: 'ParkAction', progress: start } }], 'the start the failing action carried goes with the park')
})

t.test('it takes its task events by the maps, under its consumer name', async (t) => {
  t.match(reaction.options, { name: 'workflow-manager', maxDeliveries: 6, concurrency: 64 })
  t.same(reaction.options.subjects, ['events.task.TaskStarted', 'events.task.TaskArrived', 'events.task.TaskCompleted', 'events.task.TaskFailed', 'events.task.TaskRouted'])
})
