import t from 'tap'
import { ReactionSpecification } from '../helpers/reaction-specification.js'
import { decider, routeLifecycle, type RouteLifecycleCommand, type RouteLifecycleInput } from '../../src/processes/route-lifecycle.js'
import { send as sendAny } from '../../src/processes/reaction.js'
import type { RouteEvent } from '../../src/routes/route.js'

// Given the history its load step reads / when a relayed event / then the commands it sends. No database.

const now = new Date('2026-11-29T09:00:00Z')
const at = now.toISOString()
const org = 'org_1'
const ids = { route_id: 7, organization_id: org }
const spec = ReactionSpecification.for(decider)
const send = (command: RouteLifecycleCommand) => sendAny(command)

let id = 0
const taskEvent = (type: 'TaskStarted' | 'TaskCompleted' | 'TaskFailed' | 'TaskCancelled', route?: number | null, over: { organization_id?: string } = {}) => {
  const data = { ulid: 'T1', organization_id: over.organization_id ?? org, ...(route !== undefined ? { route_id: route } : {}) }
  const step = {
    TaskStarted: { type, data: { ...data, started_at: at } },
    TaskCompleted: { type, data: { ...data, signed_by: null, notes: null, barcode: null, attachment_ids: [], completed_at: at } },
    TaskFailed: { type, data: { ...data, reason: 'receiver_absent', notes: null, signed_by: null, barcode: null, attachment_ids: [], failed_at: at } },
    TaskCancelled: { type, data: { ...data, reason: null, cancelled_at: at } },
  }[type]
  return { id: `ev-${++id}`, streamId: 'task-T1', streamVersion: 5, ...step } as RouteLifecycleInput
}
const routeEvent = (e: 'RouteStarted' | 'RouteTaskRemoved', version = 4): RouteLifecycleInput =>
  e === 'RouteStarted'
    ? { id: `ev-${++id}`, streamId: 'route-7', streamVersion: version, type: e, data: { ...ids, task_ulid: 'T1', started_at: at } }
    : { id: `ev-${++id}`, streamId: 'route-7', streamVersion: version, type: e, data: { ...ids, task_ulid: 'T2', removed_at: at } }
const input = (message: RouteLifecycleInput) => ({ message, now })
const routed = (route_id: number) => ({ type: 'TaskRouted' as const, data: { ulid: 'T1', organization_id: org, route_id, routed_at: at } })
const unrouted = (route_id: number) => ({ type: 'TaskUnrouted' as const, data: { ulid: 'T1', organization_id: org, route_id, unrouted_at: at } })

const created: RouteEvent = {
  type: 'RouteCreated',
  data: { ...ids, name: null, shift_date: '2026-11-29', driver_id: 'drv_1', vehicle_id: null, capacity: { grams: null, volume_cm3: null, packages: null }, start_address: null, end_address: null, created_at: at },
}
const load = { grams: 100, volume_cm3: 10, packages: 1 }
const added: RouteEvent = {
  type: 'RouteTasksAdded',
  data: {
    ...ids, index: 0, added_at: at, tasks: [
      { ulid: 'P1', type: 'pickup', load, shipment_id: 11, status: 'pending' },
      { ulid: 'T1', type: 'delivery', load, shipment_id: 11, status: 'pending' },
      { ulid: 'T2', type: 'delivery', load, shipment_id: 12, status: 'pending' },
      { ulid: 'T3', type: 'delivery', load, shipment_id: null, status: 'pending' },
      { ulid: 'T4', type: 'delivery', load, shipment_id: 12, status: 'pending' },
    ],
  },
}
const outForDelivery = (shipment_id: number) => send({ type: 'SetRoutesStatus', data: { route_id: 7, shipment_id, status: 'out_for_delivery', key: `route:7:started:shipment:${shipment_id}` } })

t.test('a task that starts starts its route: the one its step names, or (older steps) the one its markers left it on', async (t) => {
  spec.given([]).when(input(taskEvent('TaskStarted', 7))).then(t, [send({ type: 'StartRoute', data: { route_id: 7, task_ulid: 'T1' } })])
  spec.given([routed(3)]).when(input(taskEvent('TaskStarted', 7))).then(t, [send({ type: 'StartRoute', data: { route_id: 7, task_ulid: 'T1' } })], 'the step\'s own route wins')
  spec.given([routed(3)]).when(input(taskEvent('TaskStarted'))).then(t, [send({ type: 'StartRoute', data: { route_id: 3, task_ulid: 'T1' } })], 'no route named: its markers')
  spec.given([routed(3), unrouted(3), routed(4)]).when(input(taskEvent('TaskStarted'))).then(t, [send({ type: 'StartRoute', data: { route_id: 4, task_ulid: 'T1' } })])
})

t.test('a task on no route, or of no organization, is nothing to do', async (t) => {
  spec.given([]).when(input(taskEvent('TaskStarted', null))).thenIgnores(t, /no route/)
  spec.given([routed(3)]).when(input(taskEvent('TaskCompleted', null))).thenIgnores(t, /no route/, 'a step that says "no route" is believed')
  spec.given([routed(3), unrouted(3)]).when(input(taskEvent('TaskStarted'))).thenIgnores(t, /no route/)
  spec.given([]).when(input(taskEvent('TaskStarted'))).thenIgnores(t, /no route/)
  spec.given([]).when(input(taskEvent('TaskStarted', 7, { organization_id: '' }))).thenIgnores(t, /no organization/)
})

t.test('a final step, or a task removed, may finish the route', async (t) => {
  for (const step of ['TaskCompleted', 'TaskFailed', 'TaskCancelled'] as const) {
    spec.given([]).when(input(taskEvent(step, 7))).then(t, [send({ type: 'FinishRoute', data: { route_id: 7 } })], step)
  }
  spec.given([routed(9)]).when(input(taskEvent('TaskCompleted'))).then(t, [send({ type: 'FinishRoute', data: { route_id: 9 } })], 'older step: its markers')
  spec.given([]).when(input(routeEvent('RouteTaskRemoved'))).then(t, [send({ type: 'FinishRoute', data: { route_id: 7 } })])
})

t.test('a route that starts puts its delivery tasks\' shipments out for delivery, each once, then may finish', async (t) => {
  spec.given([created, added]).when(input(routeEvent('RouteStarted'))).then(t, [outForDelivery(11), outForDelivery(12), send({ type: 'FinishRoute', data: { route_id: 7 } })])
  spec.given([created]).when(input(routeEvent('RouteStarted'))).then(t, [send({ type: 'FinishRoute', data: { route_id: 7 } })], 'no delivery task: nothing to set')
})

t.test('the load step reads only what the decision needs, up to the event', async (t) => {
  t.same(routeLifecycle.load(taskEvent('TaskStarted', 7)), null, 'a step that names its route reads nothing')
  t.same(routeLifecycle.load(taskEvent('TaskCompleted', null)), null, 'nor one that names none')
  t.same(routeLifecycle.load(taskEvent('TaskStarted')), { stream: 'task-T1', through: 5 }, 'an older step: its task\'s markers up to it')
  t.same(routeLifecycle.load(routeEvent('RouteStarted', 4)), { stream: 'route-7', through: 4 }, 'a start: the route as it started')
  t.same(routeLifecycle.load(routeEvent('RouteTaskRemoved')), null)
  t.same(routeLifecycle.load(taskEvent('TaskStarted', undefined, { organization_id: '' })), null, 'no organization: nothing')
})

t.test('it takes the events of its maps only, ordered, under its consumer name', async (t) => {
  t.match(routeLifecycle.options, { name: 'route-lifecycle', ordered: true, maxDeliveries: 10 })
  t.same(routeLifecycle.options.subjects, [
    'events.task.TaskStarted', 'events.task.TaskCompleted', 'events.task.TaskFailed', 'events.task.TaskCancelled',
    'events.route.RouteStarted', 'events.route.RouteTaskRemoved',
  ])
  const source = routeLifecycle.source
  t.equal(source.from, 'events')
  if (source.from !== 'events') return
  const recorded = (type: string) => ({ id: 'e', streamId: 'task-T1', streamVersion: 1, position: '1', type, data: {}, metadata: { actor: { kind: 'system' as const, id: 'x' }, occurred_at: at }, schemaVersion: 1, recordedAt: now })
  t.ok(source.take(recorded('TaskStarted')))
  t.equal(source.take(recorded('TaskArrived')), null, 'an event of no map here')
})
