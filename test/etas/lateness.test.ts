import t from 'tap'
import { taskCreated, taskRouted, taskStarted } from './delay-events.js'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { LATE_AFTER_MS, lateByMinutes, latenessOf } from '../../src/etas/lateness.js'
import { etaView } from '../../src/etas/eta-payload.js'
import { lateStops } from '../../src/etas/late-stops.js'
import { backOnTimeEventId, decider } from '../../src/etas/back-on-time.js'
import { decider as delayDecider, type DelayEvent } from '../../src/etas/delay-task.js'
import { organizationEventOf } from '../../src/webhooks/organization-events.js'
import { patternProblem } from '../../src/webhooks/event-patterns.js'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { upcasters } from '../../src/infrastructure/event-store/upcasting.js'

// Issue 37: whether a stop is late, by how much and since when; the back-on-time decision; the
// webhooks' payloads. Pure: times in, values out.

const T0 = Date.parse('2026-11-29T14:00:00Z')
const min = (m: number) => T0 + m * 60_000
const iso = (m: number) => new Date(min(m)).toISOString()

t.test('late: a minute or more past the window\'s end, in whole minutes; on time otherwise', async (t) => {
  t.equal(lateByMinutes(min(47), min(0)), 47)
  t.equal(lateByMinutes(min(0) + LATE_AFTER_MS - 1, min(0)), null, 'less than a minute past: on time')
  t.equal(lateByMinutes(min(-5), min(0)), null, 'inside the window')
  t.equal(lateByMinutes(min(90), null), null, 'no window: never late')
})

t.test('late since: the first late ETA of an episode; kept while late; gone when back inside', async (t) => {
  const w = { from: min(-240), to: min(0) }
  const first = latenessOf(min(20), w, null, min(-30))
  t.same(first, { windowFrom: min(-240), windowTo: min(0), lateSince: min(-30) })
  const still = latenessOf(min(35), w, first, min(-20))
  t.equal(still.lateSince, min(-30), 'the episode\'s start stays')
  const back = latenessOf(min(-10), w, still, min(-15))
  t.equal(back.lateSince, null, 'on time again')
  t.equal(latenessOf(min(5), w, back, min(-12)).lateSince, min(-12), 'a new episode starts anew')
  t.same(latenessOf(min(5), null, null, min(0)), { windowFrom: null, windowTo: null, lateSince: null }, 'no window')
})

t.test('the API\'s eta: window, late, late_by_minutes, late_since', async (t) => {
  const v = etaView({ at: min(47), from: min(40), to: min(55), basis: 'position', computedAt: min(-5), windowFrom: min(-240), windowTo: min(0), lateSince: min(-20) })
  t.same(v, {
    at: iso(47), from: iso(40), to: iso(55), basis: 'position', computed_at: iso(-5),
    window: { from: iso(-240), to: iso(0) }, late: true, late_by_minutes: 47, late_since: iso(-20),
  })
  const onTime = etaView({ at: min(-47), from: min(-50), to: min(-40), basis: 'plan', computedAt: min(-60), windowFrom: min(-240), windowTo: min(0), lateSince: null })
  t.match(onTime, { late: false, late_by_minutes: null, late_since: null })
  t.equal(etaView({ at: min(5), from: min(0), to: min(9), basis: 'plan', computedAt: min(-60), windowFrom: null, windowTo: null, lateSince: null }).window, null)
  t.equal(lateStops([{ eta: v }, { eta: onTime }, { eta: null }, { eta: v }]), 2, 'a route counts its late stops')
})

const created = taskCreated({ from: iso(-240), to: iso(0) }, iso(-300))
const routed = taskRouted(iso(-290))
const started = taskStarted(iso(-60))
const delayed = (m: number): DelayEvent => ({
  type: 'TaskDelayed',
  data: {
    ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, status: 'started', eta: iso(m + 40), window_to: iso(0), minutes_late: 40,
    delayed_at: iso(m), late_by_minutes: 40, late_since: iso(m - 3),
  },
})
const back = (m: number, delayedAt: number): DelayEvent => ({
  type: 'TaskBackOnTime',
  data: {
    ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, status: 'started', eta: iso(-2), window_to: iso(0),
    late_by_minutes: null, late_since: null, delayed_at: iso(delayedAt), back_on_time_at: iso(m),
  },
})
const mark = (m: number) => ({ type: 'MarkBackOnTime' as const, data: { ulid: 'T1', eta: new Date(min(-2)), window_to: new Date(min(0)), now: new Date(min(m)) } })

t.test('TaskBackOnTime: once per TaskDelayed, only for a stop still waiting', async (t) => {
  const spec = DeciderSpecification.for(decider)
  spec.given([created, routed, started, delayed(-30)]).when(mark(-20)).then(t, [back(-20, -30)])
  spec.given([created, routed, started, delayed(-30), back(-20, -30)]).when(mark(-15)).thenNothingHappened(t, 'that delay is answered')
  spec.given([created, routed, started, delayed(-30), back(-20, -30), delayed(-12)]).when(mark(-8)).then(t, [back(-8, -12)], 'late again, back again')
  spec.given([created, routed, started]).when(mark(-20)).thenNothingHappened(t, 'never delayed: nothing to take back')
  const done: DelayEvent = { type: 'TaskCompleted', data: { ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, signed_by: null, notes: null, barcode: null, attachment_ids: [], completed_at: iso(-25) } } as DelayEvent
  spec.given([created, routed, started, delayed(-30), done]).when(mark(-20)).thenNothingHappened(t, 'done: no longer anyone\'s concern')
  t.not(backOnTimeEventId('T1', new Date(min(-30))), backOnTimeEventId('T1', new Date(min(-12))), 'one id per delay answered')
  t.equal(backOnTimeEventId('T1', new Date(min(-30))), backOnTimeEventId('T1', new Date(min(-30))), 'two engines asking store one event')
})

t.test('TaskDelayed carries late_by_minutes and late_since when the engine says since when', async (t) => {
  const spec = DeciderSpecification.for(delayDecider)
  const command = { type: 'DelayTask' as const, data: { ulid: 'T1', eta: new Date(min(10)), window_to: new Date(min(0)), minutes_late: 10, back_inside_at: null, now: new Date(min(-5)), late_since: new Date(min(-9)) } }
  spec.given([created, routed, started]).when(command).thenMatches(t, [{ type: 'TaskDelayed', data: { minutes_late: 10, late_by_minutes: 10, late_since: iso(-9), delayed_at: iso(-5) } }])
})

const recorded = (type: string, data: unknown): RecordedEvent => ({
  id: 'evt_1', streamId: 'task-T1', streamVersion: 1, position: '1', type, data, schemaVersion: 1, recordedAt: new Date(),
  metadata: { actor: { kind: 'system', id: 'eta-engine' }, occurred_at: iso(0) },
})

t.test('webhooks: task.delayed and task.back_on_time carry the eta\'s names', async (t) => {
  const { organization_id: _o, ...delayedData } = (delayed(-30) as { data: Record<string, unknown> }).data
  t.same(organizationEventOf(recorded('TaskDelayed', (delayed(-30) as { data: unknown }).data)), {
    organization_id: 'org_1', type: 'task.delayed', data: { ulid: 'T1', ...delayedData },
  })
  const old = { ulid: 'T1', organization_id: 'org_1', route_id: 3, workflow_id: 7, status: 'pending', eta: iso(12), window_to: iso(0), minutes_late: 12, delayed_at: iso(-1) }
  t.match(organizationEventOf(upcasters(recorded('TaskDelayed', old)))!.data, { late_by_minutes: 12, late_since: iso(-1) }, 'an event stored before them (version 1), as the store reads it: from minutes_late and delayed_at')
  const n = organizationEventOf(recorded('TaskBackOnTime', (back(-20, -30) as { data: unknown }).data))
  t.match(n, { organization_id: 'org_1', type: 'task.back_on_time', data: { ulid: 'T1', late_by_minutes: null, late_since: null, delayed_at: iso(-30) } })
  t.notOk('organization_id' in n!.data)
  t.equal(patternProblem('task.back_on_time'), null, 'a webhook may subscribe to it')
})
