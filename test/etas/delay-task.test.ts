import t from 'tap'
import { taskCreated, taskRouted, taskStarted } from './delay-events.js'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider, delayEventId, type DelayEvent, type DelayTask } from '../../src/etas/delay-task.js'

// DESIGN §3.10: TaskDelayed once when the ETA first passes the window's end by the threshold, again
// only after an ETA came back inside; the task's stream decides, so the engine may ask every time.

const spec = DeciderSpecification.for(decider)
const at = (min: number) => new Date(Date.parse('2026-11-27T10:00:00Z') + min * 60_000)
const created = taskCreated({ from: at(-50).toISOString(), to: at(10).toISOString() }, at(-60).toISOString())
const routed = taskRouted(at(0).toISOString())
const started = taskStarted(at(1).toISOString())
const delay = (now: number, backInside: number | null = null): DelayTask => ({
  type: 'DelayTask', data: { ulid: 'T1', eta: at(now + 30), window_to: at(10), minutes_late: now + 20, back_inside_at: backInside === null ? null : at(backInside), now: at(now) },
})
const delayed = (now: number): DelayEvent => ({
  type: 'TaskDelayed',
  data: {
    ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, status: 'started',
    eta: at(now + 30).toISOString(), window_to: at(10).toISOString(), minutes_late: now + 20, delayed_at: at(now).toISOString(),
    // Version 2 (issue 37): without the engine's late_since, late since now.
    late_by_minutes: now + 20, late_since: at(now).toISOString(),
  },
})

t.test('the first time: TaskDelayed naming the task, its route and workflow, the ETA and the window', async (t) => {
  spec.given([created, routed, started]).when(delay(5)).then(t, [delayed(5)])
})

t.test('asked again while still late: nothing (the engine asks on every position)', async (t) => {
  spec.given([created, routed, started, delayed(5)]).when(delay(6)).thenNothingHappened(t)
  spec.given([created, routed, started, delayed(5)]).when(delay(7, 3)).thenNothingHappened(t, 'back inside before the delay does not count')
})

t.test('late again after an ETA came back inside the window: a second TaskDelayed', async (t) => {
  spec.given([created, routed, started, delayed(5)]).when(delay(20, 12)).then(t, [delayed(20)])
  spec.given([created, routed, started, delayed(5), delayed(20)]).when(delay(25, 12)).thenNothingHappened(t, 'that episode is told')
})

t.test('a task that is done, or unknown, is late for nobody', async (t) => {
  spec.given([created, routed, started, { type: 'TaskCompleted', data: { ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, signed_by: null, notes: null, barcode: null, attachment_ids: [], completed_at: at(2).toISOString() } }]).when(delay(5)).thenNothingHappened(t)
  spec.given([]).when(delay(5)).thenNothingHappened(t)
})

t.test('the event id is the episode\'s: two engines asking at once store one event', async (t) => {
  t.equal(delayEventId('T1', null), delayEventId('T1', null))
  t.not(delayEventId('T1', null), delayEventId('T1', at(12)))
  t.not(delayEventId('T1', null), delayEventId('T2', null))
  t.match(delayEventId('T1', null), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})
