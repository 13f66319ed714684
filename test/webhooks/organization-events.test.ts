import t from 'tap'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { organizationEventOf } from '../../src/webhooks/organization-events.js'
import { matches, patternProblem } from '../../src/webhooks/event-patterns.js'

const recorded = (type: string, data: unknown, streamId = 'task-01JTASK'): RecordedEvent => ({
  id: 'evt_1', streamId, streamVersion: 1, position: '1', type, data, schemaVersion: 1, recordedAt: new Date(),
  metadata: { actor: { kind: 'organization', id: 'org_1' }, occurred_at: '2026-11-24T09:00:00.000Z' },
})

t.test('task events map to task.* webhooks: {ulid, status} and the event\'s own fields, without organization_id', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['TaskCreated', 'task.created', 'pending'], ['TaskStarted', 'task.started', 'started'], ['TaskArrived', 'task.arrived', 'arrived'],
    ['TaskCompleted', 'task.completed', 'complete'], ['TaskFailed', 'task.failed', 'failed'], ['TaskCancelled', 'task.cancelled', 'cancelled'],
  ]
  for (const [event, type, status] of cases) {
    const n = organizationEventOf(recorded(event, { ulid: '01JTASK', organization_id: 'org_1', at: 'x' }))
    t.same(n, { organization_id: 'org_1', type, data: { ulid: '01JTASK', status, at: 'x' } }, event)
  }
  t.same(organizationEventOf(recorded('TaskFailed', { organization_id: 'org_1', reason: 'no_access' }))!.data, { ulid: '01JTASK', status: 'failed', reason: 'no_access' }, 'the ulid from the stream when the data lacks it')
  t.equal(organizationEventOf(recorded('TaskAttachmentAdded', { ulid: '01JTASK', organization_id: 'org_1' })), undefined, 'attachments are not notified')
  t.equal(organizationEventOf(recorded('TaskCompleted', { ulid: '01JTASK' })), undefined, 'no organization: nobody to tell')
  t.equal(organizationEventOf(recorded('ShipmentCreated', { organization_id: 'org_1' }, 'shipment-1')), undefined)
})

t.test('patterns: known types, family wildcards, custom.<name>; matching', async (t) => {
  for (const ok of ['task.completed', 'task.*', 'workflow.completed', 'route.published', 'route.*', 'custom.parcel_scanned', 'custom.*']) t.equal(patternProblem(ok), null, ok)
  for (const bad of ['task.exploded', 'nope.*', '*', 'custom.', 'custom.UPPER', 'task', '']) t.type(patternProblem(bad), 'string', bad)
  t.ok(matches(['task.*'], 'task.completed'))
  t.ok(matches(['task.completed'], 'task.completed'))
  t.notOk(matches(['task.completed'], 'task.failed'))
  t.notOk(matches(['task.*'], 'workflow.completed'))
  t.notOk(matches(['task.*'], 'taskx.completed'))
  t.ok(matches(['custom.*'], 'custom.parcel_scanned'))
})

t.test('workflow events map to workflow.* webhooks; emit_event to custom.<event>', async (t) => {
  const wf = (type: string, data: Record<string, unknown>) => organizationEventOf(recorded(type, { workflow_id: 7, organization_id: 'org_1', ...data }, 'workflow-7'))
  t.same(wf('WorkflowCompleted', { action_key: 'k', completed_at: 'x' }), { organization_id: 'org_1', type: 'workflow.completed', data: { id: 7, status: 'completed', at: 'x' } })
  t.same(wf('WorkflowFailed', { action_key: 'k', failed_at: 'y' })!.type, 'workflow.failed')
  t.same(wf('WorkflowCancelled', { cancelled_at: 'z' })!.data, { id: 7, status: 'cancelled', at: 'z' })
  t.match(wf('WorkflowCreated', { blueprint: { id: 1, key: 'delivery', version: 1 }, shipment_id: null, created_at: 'w' }), { type: 'workflow.created', data: { id: 7, status: 'new', blueprint: { key: 'delivery' } } })
  t.same(wf('WorkflowEventEmitted', { action_key: 'k', event: 'parcel_scanned', at: 'a' }), {
    organization_id: 'org_1', type: 'custom.parcel_scanned', data: { id: 7, workflow_id: 7, event: 'parcel_scanned', action_key: 'k', at: 'a' },
  })
  t.equal(wf('WorkflowTaskCreated', { ulid: 'X' }), undefined, 'a task made is told as task.created, not twice')
  t.equal(organizationEventOf(recorded('WorkflowCompleted', { workflow_id: 7, organization_id: 'org_1' }, 'workflow-start-abc')), undefined)
})
