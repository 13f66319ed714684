import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider as creation, type CreateTask } from '../../src/tasks/create-task.js'
import { decider as start } from '../../src/tasks/start-task.js'
import { decider as arrive } from '../../src/tasks/arrive-task.js'
import { decider as complete, type CompleteTask } from '../../src/tasks/complete-task.js'
import { decider as fail, type FailTask } from '../../src/tasks/fail-task.js'
import { decider as cancel } from '../../src/tasks/cancel-task.js'
import { decider as attach } from '../../src/tasks/task-attachments.js'
import type { TaskEvent } from '../../src/tasks/task.js'
import type { TaskCreated } from '../../schemas/events/tasks.js'
import { IllegalStateError, NotFoundError, ValidationError } from '../../src/shared/errors.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-25T10:00:00Z')
const at = now.toISOString()
const ids = { ulid: '01JDTASK0000000000000000AA', organization_id: 'org_1' }
/** What each step of the task carries: the task and the route it is on (none here). */
const step = { ...ids, route_id: null }
const address = {
  id: 'adr_1', created: true, organization_id: 'org_1', place_id: null, name: 'Ana', street: 'San Martín', street_number: '50', floor: null, apartment: null,
  reference: null, zipcode: null, phone: null, email: null, document_type: null, document_number: null, city: { id: 1, name: 'Rosario' },
  state: null, country: { id: 1, name: 'Argentina', iso: 'AR' }, geo_latitude: -32.9, geo_longitude: -60.6,
}
const createdData = (over: Partial<TaskCreated> = {}): TaskCreated => ({
  ...ids, type: 'delivery', address, shipment_id: 7, workflow_id: null, step_key: null, assignee_id: null, time_windows: [], duration_minutes: null,
  dependencies: [], requirements: { complete: [], fail: [] }, load: { grams: 0, volume_cm3: 0, packages: 0 }, notes: null, external_reference: null,
  created_at: at, ...over,
})
const created = (over: Partial<TaskCreated> = {}): TaskEvent => ({ type: 'TaskCreated', data: createdData(over) })
const started: TaskEvent = { type: 'TaskStarted', data: { ...step, started_at: at } }
const arrived: TaskEvent = { type: 'TaskArrived', data: { ...step, arrived_at: at } }
const completed: TaskEvent = { type: 'TaskCompleted', data: { ...step, signed_by: null, notes: null, barcode: null, attachment_ids: [], completed_at: at } }
const cancelled: TaskEvent = { type: 'TaskCancelled', data: { ...step, reason: null, cancelled_at: at } }
const photo: TaskEvent = {
  type: 'TaskAttachmentAdded',
  data: { ...ids, id: 'att_1', filename: 'p.png', content_type: 'image/png', size: 1, sha256: 'x', blob_key: 'k', description: null, uploaded_by: 'org_1', uploaded_at: at },
}
const pdf: TaskEvent = { type: 'TaskAttachmentAdded', data: { ...(photo.data as any), id: 'att_2', content_type: 'application/pdf' } }

const proof = { signed_by: null, notes: null, barcode: null, attachment_ids: [], label_codes: ['PKG-A'] }
const completeCmd = (over: Partial<CompleteTask['data']> = {}): CompleteTask => ({ type: 'CompleteTask', data: { ...proof, organization_id: 'org_1', pending_dependencies: [], now, ...over } })
const failCmd = (over: Partial<FailTask['data']> = {}): FailTask => ({ type: 'FailTask', data: { ...proof, organization_id: 'org_1', reason: 'no_answer', pending_dependencies: [], now, ...over } })

t.test('create: the task; a second create is refused', async (t) => {
  const cmd: CreateTask = { type: 'CreateTask', data: createdData() }
  DeciderSpecification.for(creation).given([]).when(cmd).then(t, [created()])
  DeciderSpecification.for(creation).given([created()]).when(cmd).thenThrows(t, IllegalStateError, { code: 'task_exists' })
})

t.test('start: pending → started; not twice; dependencies must be complete; another tenant\'s task is unknown', async (t) => {
  const spec = DeciderSpecification.for(start)
  const cmd = (pending: string[] = [], org = 'org_1') => ({ type: 'StartTask' as const, data: { organization_id: org, pending_dependencies: pending, now } })
  spec.given([created()]).when(cmd()).then(t, [started])
  spec.given([created(), started]).when(cmd()).thenThrows(t, IllegalStateError, { code: 'invalid_transition' })
  spec.given([created()]).when(cmd(['01A', '01B'])).thenThrows(t, IllegalStateError, { code: 'dependencies_pending', message: /01A, 01B/ })
  spec.given([created()]).when(cmd([], 'org_2')).thenThrows(t, NotFoundError)
  spec.given([]).when(cmd()).thenThrows(t, NotFoundError)
  spec.given([created(), cancelled]).when(cmd()).thenThrows(t, IllegalStateError, { code: 'task_final' })
})

t.test('arrive: started → arrived; from pending the start is recorded as skipped', async (t) => {
  const spec = DeciderSpecification.for(arrive)
  const cmd = (pending: string[] = []) => ({ type: 'ArriveTask' as const, data: { organization_id: 'org_1', pending_dependencies: pending, now } })
  spec.given([created(), started]).when(cmd()).then(t, [arrived])
  spec.given([created()]).when(cmd()).then(t, [{ type: 'TaskStarted', data: { ...step, started_at: at, skipped: true } }, arrived])
  spec.given([created()]).when(cmd(['01A'])).thenThrows(t, IllegalStateError, { code: 'dependencies_pending' })
  spec.given([created(), started, arrived]).when(cmd()).thenThrows(t, IllegalStateError, { code: 'invalid_transition' })
})

t.test('complete: missing steps recorded as skipped at the same time; final states immutable', async (t) => {
  const spec = DeciderSpecification.for(complete)
  spec.given([created()]).when(completeCmd()).then(t, [
    { type: 'TaskStarted', data: { ...step, started_at: at, skipped: true } },
    { type: 'TaskArrived', data: { ...step, arrived_at: at, skipped: true } },
    completed,
  ])
  spec.given([created(), started]).when(completeCmd()).then(t, [{ type: 'TaskArrived', data: { ...step, arrived_at: at, skipped: true } }, completed])
  spec.given([created(), started, arrived]).when(completeCmd()).then(t, [completed])
  for (const final of [completed, cancelled]) spec.given([created(), final]).when(completeCmd()).thenThrows(t, IllegalStateError, { code: 'task_final' })
  spec.given([created()]).when(completeCmd({ pending_dependencies: ['01A'] })).thenThrows(t, IllegalStateError, { code: 'dependencies_pending' })
  spec.given([created(), started]).when(completeCmd({ pending_dependencies: ['01A'] })).thenMatches(t, [{ type: 'TaskArrived' }, { type: 'TaskCompleted' }])
})

t.test('complete: every missing proof named at once; a barcode must be a label code; a photo must be an image', async (t) => {
  const spec = DeciderSpecification.for(complete)
  const strict = created({ requirements: { complete: ['signature', 'photo', 'barcode_scan', 'notes'], fail: [] } })
  const err = spec.given([strict]).when(completeCmd()).thenThrows(t, ValidationError) as ValidationError
  t.same(Object.keys(err.errors).sort(), ['attachment_ids', 'barcode', 'notes', 'signed_by'])
  spec.given([strict, pdf]).when(completeCmd({ signed_by: 'Ana', notes: 'n', barcode: 'PKG-A', attachment_ids: ['att_2'] }))
    .thenThrows(t, ValidationError, { errors: { attachment_ids: [/photo/] } })
  spec.given([strict, photo]).when(completeCmd({ signed_by: 'Ana', notes: 'n', barcode: 'PKG-X' })).thenThrows(t, ValidationError, { errors: { barcode: [/label code/] } })
  spec.given([created()]).when(completeCmd({ attachment_ids: ['att_9'] })).thenThrows(t, ValidationError, { errors: { 'attachment_ids.0': [/not an attachment/] } })
  spec.given([strict, photo]).when(completeCmd({ signed_by: 'Ana', notes: 'n', barcode: 'PKG-A', attachment_ids: ['att_1'] })).thenMatches(t, [
    { type: 'TaskStarted' }, { type: 'TaskArrived' }, { type: 'TaskCompleted', data: { signed_by: 'Ana', barcode: 'PKG-A', attachment_ids: ['att_1'] } },
  ])
})

t.test('fail: the reason, the fail requirements, skipped steps, final states', async (t) => {
  const spec = DeciderSpecification.for(fail)
  spec.given([created(), started, arrived]).when(failCmd({ notes: 'nobody' })).then(t, [
    { type: 'TaskFailed', data: { ...step, reason: 'no_answer', notes: 'nobody', signed_by: null, barcode: null, attachment_ids: [], failed_at: at } },
  ])
  spec.given([created()]).when(failCmd()).thenMatches(t, [{ type: 'TaskStarted', data: { skipped: true } }, { type: 'TaskArrived', data: { skipped: true } }, { type: 'TaskFailed' }])
  spec.given([created({ requirements: { complete: [], fail: ['notes', 'photo'] } })]).when(failCmd()).thenThrows(t, ValidationError, { errors: { notes: [/notes/], attachment_ids: [/photo/] } })
  spec.given([created(), completed]).when(failCmd()).thenThrows(t, IllegalStateError, { code: 'task_final' })
})

t.test('cancel: any open state; never twice', async (t) => {
  const spec = DeciderSpecification.for(cancel)
  const cmd = { type: 'CancelTask' as const, data: { organization_id: 'org_1', reason: null, now } }
  for (const history of [[created()], [created(), started], [created(), started, arrived]]) spec.given(history).when(cmd).then(t, [cancelled])
  spec.given([created(), cancelled]).when(cmd).thenThrows(t, IllegalStateError, { code: 'task_final' })
  spec.given([created(), completed]).when(cmd).thenThrows(t, IllegalStateError, { code: 'task_final' })
})

t.test('attachments: in any state, on the organization\'s own task', async (t) => {
  const spec = DeciderSpecification.for(attach)
  spec.given([created(), completed]).when({ type: 'AddTaskAttachment', data: photo.data as any }).then(t, [photo])
  spec.given([]).when({ type: 'AddTaskAttachment', data: photo.data as any }).thenThrows(t, NotFoundError)
})

t.test('each step names the route the task is on then (its stream\'s routing markers)', async (t) => {
  const spec = DeciderSpecification.for(cancel)
  const cmd = { type: 'CancelTask' as const, data: { organization_id: 'org_1', reason: null, now } }
  const routed = { type: 'TaskRouted', data: { ...ids, route_id: 42, routed_at: at } } as unknown as TaskEvent
  const unrouted = { type: 'TaskUnrouted', data: { ...ids, route_id: 42, unrouted_at: at } } as unknown as TaskEvent
  spec.given([created(), routed]).when(cmd).thenMatches(t, [{ type: 'TaskCancelled', data: { route_id: 42 } }])
  spec.given([created(), routed, unrouted]).when(cmd).thenMatches(t, [{ type: 'TaskCancelled', data: { route_id: null } }])
})
