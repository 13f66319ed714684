import t from 'tap'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { loadProfile, taskMarkersOf, type RouteEvent, type TaskFacts } from '../../src/routes/route.js'
import { decider as add, type AddRouteTasks } from '../../src/routes/add-tasks.js'
import { decider as creation } from '../../src/routes/create-route.js'
import { decider as update } from '../../src/routes/update-route.js'
import { decider as remove } from '../../src/routes/remove-task.js'
import { decider as reorder } from '../../src/routes/reorder-tasks.js'
import { decider as publish } from '../../src/routes/publish-route.js'
import { decider as block } from '../../src/routes/block-route.js'
import { decider as unblock } from '../../src/routes/unblock-route.js'
import { decider as startRoute } from '../../src/routes/start-route.js'
import { decider as finishRoute } from '../../src/routes/finish-route.js'
import { IllegalStateError, NotFoundError, ValidationError } from '../../src/shared/errors.js'

// Given events / when command / then events (or error), no database.

const now = new Date('2026-11-25T09:00:00Z')
const at = now.toISOString()
const ids = { route_id: 7, organization_id: 'org_1' }
const none = { grams: null, volume_cm3: null, packages: null }
const created = (capacity: { grams: number | null; volume_cm3: number | null; packages: number | null } = none, driver_id: string | null = null): RouteEvent => ({
  type: 'RouteCreated',
  data: { ...ids, name: null, shift_date: '2026-11-26', driver_id, vehicle_id: capacity === none ? null : 'veh_1', capacity, start_address: null, end_address: null, created_at: at },
})
const load = (grams: number, volume_cm3 = 0, packages = 1) => ({ grams, volume_cm3, packages })
const fact = (ulid: string, over: Partial<TaskFacts> = {}): TaskFacts =>
  ({ ulid, organizationId: 'org_1', type: 'delivery', load: load(100), shipmentId: null, status: 'pending', routeId: null, version: 1, ...over })
const addCmd = (facts: TaskFacts[], position: number | null = null): AddRouteTasks =>
  ({ type: 'AddRouteTasks', data: { organization_id: 'org_1', task_ulids: facts.map((f) => f.ulid), position, tasks: new Map(facts.map((f) => [f.ulid, f])), now } })
const added = (facts: TaskFacts[], index: number): RouteEvent => ({
  type: 'RouteTasksAdded',
  data: { ...ids, index, added_at: at, tasks: facts.map((f) => ({ ulid: f.ulid, type: f.type as 'delivery', load: f.load, shipment_id: f.shipmentId, status: f.status })) },
})

t.test('capacity rule: deliveries loaded at the start, pickups add where they stand, a picked-up shipment unloads at its delivery', async (t) => {
  const cap = { grams: 1000, volume_cm3: 500, packages: null }
  t.same(loadProfile([], cap), { peak: { grams: 0, volume_cm3: 0, packages: 0 }, overflow: null })
  const pickupsThenDeliveries = [
    { type: 'pickup', load: load(400, 100), shipment_id: 1 }, { type: 'pickup', load: load(500, 100), shipment_id: 2 },
    { type: 'delivery', load: load(400, 100), shipment_id: 1 }, { type: 'delivery', load: load(500, 100), shipment_id: 2 },
  ]
  t.same(loadProfile(pickupsThenDeliveries, cap), { peak: { grams: 900, volume_cm3: 200, packages: 2 }, overflow: null }, 'both pickups on board at once')
  const interleaved = [pickupsThenDeliveries[0]!, pickupsThenDeliveries[2]!, pickupsThenDeliveries[1]!, pickupsThenDeliveries[3]!]
  t.same(loadProfile(interleaved, cap).peak, { grams: 500, volume_cm3: 100, packages: 1 }, 'delivered before the next pickup')
  const startLoaded = [{ type: 'delivery', load: load(600, 0), shipment_id: null }, { type: 'pickup', load: load(500, 0), shipment_id: 3 }]
  t.same(loadProfile(startLoaded, cap).peak.grams, 600, 'the delivery leaves before the pickup adds')
  const reversed = [startLoaded[1]!, startLoaded[0]!]
  t.same(loadProfile(reversed, cap).overflow, { dimension: 'grams', capacity: 1000, peak: 1100 }, 'pickup first: 600 + 500 on board')
  const deliveryBeforeItsPickup = [{ type: 'delivery', load: load(400, 0), shipment_id: 1 }, { type: 'pickup', load: load(400, 0), shipment_id: 1 }]
  t.same(loadProfile(deliveryBeforeItsPickup, cap).peak.grams, 400, 'a delivery not preceded by its pickup is loaded at the start')
  t.same(loadProfile([{ type: 'delivery', load: load(10, 600), shipment_id: null }], cap).overflow, { dimension: 'volume_cm3', capacity: 500, peak: 600 }, 'each dimension apart')
  t.same(loadProfile([{ type: 'inspection', load: load(5000, 5000), shipment_id: null }], cap).overflow, null, 'an inspection carries nothing')
  t.same(loadProfile([{ type: 'delivery', load: load(10, 10, 1000), shipment_id: null }], cap).overflow, null, 'null is unlimited')
})

t.test('create: a draft, with its tasks in the same decision', async (t) => {
  const a = fact('A')
  DeciderSpecification.for(creation).given([]).when({
    type: 'CreateRoute',
    data: { ...ids, shift_date: '2026-11-26', name: null, driver_id: null, vehicle_id: null, capacity: none, start_address: null, end_address: null, task_ulids: ['A'], tasks: new Map([['A', a]]), now },
  }).then(t, [created(), added([a], 0)])
})

t.test('add: at a position; every bad task named; capacity; the task markers', async (t) => {
  const spec = DeciderSpecification.for(add)
  const [a, b, c] = [fact('A'), fact('B'), fact('C')]
  spec.given([created()]).when(addCmd([a, b])).then(t, [added([a, b], 0)])
  spec.given([created(), added([a, b], 0)]).when(addCmd([c], 2)).then(t, [added([c], 1)])
  spec.given([created(), added([a], 0)]).when(addCmd([
    fact('X', { organizationId: 'org_2' }), a, fact('F', { status: 'complete' }), fact('O', { routeId: 9 }), b,
  ], 5)).thenThrows(t, ValidationError, { errors: { 'task_ulids.0': [/not a task/], 'task_ulids.1': [/already on this route/], 'task_ulids.2': [/complete/], 'task_ulids.3': [/route 9/], position: [/greater than 2/] } })
  spec.given([created({ grams: 150, volume_cm3: null, packages: null })]).when(addCmd([a, b]))
    .thenThrows(t, ValidationError, { errors: { task_ulids: ['The route\'s load would exceed the vehicle\'s capacity in grams: capacity 150, peak 200.'] } })
  spec.given([created(), { type: 'RouteBlocked', data: { ...ids, reason: 'x', blocked_at: at } }]).when(addCmd([c])).thenThrows(t, IllegalStateError, { code: 'route_blocked' })
  spec.given([]).when(addCmd([a])).thenThrows(t, NotFoundError)
  t.same(taskMarkersOf([added([a], 0), { type: 'RouteTaskRemoved', data: { ...ids, task_ulid: 'B', removed_at: at } }]), [
    { stream: 'task-A', marker: { type: 'TaskRouted', data: { ulid: 'A', organization_id: 'org_1', route_id: 7, routed_at: at } } },
    { stream: 'task-B', marker: { type: 'TaskUnrouted', data: { ulid: 'B', organization_id: 'org_1', route_id: 7, unrouted_at: at } } },
  ])
})

t.test('remove, reorder, update (vehicle change re-checks capacity)', async (t) => {
  const [a, b] = [fact('A', { load: load(300) }), fact('B', { load: load(300) })]
  const given = [created(), added([a, b], 0)]
  DeciderSpecification.for(remove).given(given).when({ type: 'RemoveRouteTask', data: { organization_id: 'org_1', task_ulid: 'A', now } })
    .then(t, [{ type: 'RouteTaskRemoved', data: { ...ids, task_ulid: 'A', removed_at: at } }])
  DeciderSpecification.for(remove).given(given).when({ type: 'RemoveRouteTask', data: { organization_id: 'org_1', task_ulid: 'Z', now } }).thenThrows(t, NotFoundError)
  const r = DeciderSpecification.for(reorder)
  r.given(given).when({ type: 'ReorderRouteTasks', data: { organization_id: 'org_1', task_ulids: ['B', 'A'], now } })
    .then(t, [{ type: 'RouteTasksReordered', data: { ...ids, task_ulids: ['B', 'A'], reordered_at: at } }])
  r.given(given).when({ type: 'ReorderRouteTasks', data: { organization_id: 'org_1', task_ulids: ['A', 'B'], now } }).thenNothingHappened(t)
  r.given(given).when({ type: 'ReorderRouteTasks', data: { organization_id: 'org_1', task_ulids: ['A', 'A'], now } })
    .thenThrows(t, ValidationError, { errors: { 'task_ulids.1': [/more than once/], task_ulids: [/missing: B/] } })
  const u = DeciderSpecification.for(update)
  u.given(given).when({ type: 'UpdateRoute', data: { organization_id: 'org_1', vehicle_id: 'veh_2', capacity: { grams: 500, volume_cm3: null, packages: null }, now } })
    .thenThrows(t, ValidationError, { errors: { task_ulids: [/grams: capacity 500, peak 600/] } })
  u.given(given).when({ type: 'UpdateRoute', data: { organization_id: 'org_1', vehicle_id: 'veh_2', capacity: { grams: 600, volume_cm3: null, packages: null }, name: ' N ', now } })
    .then(t, [{ type: 'RouteUpdated', data: { ...ids, name: 'N', vehicle_id: 'veh_2', capacity: { grams: 600, volume_cm3: null, packages: null }, updated_at: at } }])
})

t.test('publish (the card\'s event, with the driver), block, and the life cycle', async (t) => {
  const p = DeciderSpecification.for(publish)
  const cmd = { type: 'PublishRoute' as const, data: { organization_id: 'org_1', now } }
  p.given([created()]).when(cmd).thenThrows(t, IllegalStateError, { code: 'route_not_publishable' })
  const published: RouteEvent = { type: 'RoutePublished', data: { ...ids, driver_id: 'usr_1', published_at: at } }
  p.given([created(none, 'usr_1')]).when(cmd).then(t, [published])
  p.given([created(none, 'usr_1'), published]).when(cmd).thenThrows(t, IllegalStateError, { code: 'route_not_publishable' })
  const b = DeciderSpecification.for(block)
  const blocked: RouteEvent = { type: 'RouteBlocked', data: { ...ids, reason: 'flat tyre', blocked_at: at } }
  b.given([created()]).when({ type: 'BlockRoute', data: { organization_id: 'org_1', reason: ' flat tyre ', now } }).then(t, [blocked])
  DeciderSpecification.for(unblock).given([created()]).when({ type: 'UnblockRoute', data: { organization_id: 'org_1', now } }).thenThrows(t, IllegalStateError, { code: 'route_not_blocked' })

  const a = fact('A')
  const l = DeciderSpecification.for(startRoute)
  const f = DeciderSpecification.for(finishRoute)
  const start = { type: 'StartRoute' as const, data: { task_ulid: 'A', now } }
  const startedEvent: RouteEvent = { type: 'RouteStarted', data: { ...ids, task_ulid: 'A', started_at: at } }
  l.given([created(none, 'usr_1'), added([a], 0)]).when(start).thenNothingHappened(t)
  l.given([created(none, 'usr_1'), added([a], 0), published]).when(start).then(t, [startedEvent])
  l.given([created(none, 'usr_1'), added([a], 0), published, startedEvent]).when(start).thenNothingHappened(t)
  const finish = (status: string) => ({ type: 'FinishRoute' as const, data: { statuses: new Map([['A', status]]), now } })
  f.given([created(none, 'usr_1'), added([a], 0), published, startedEvent]).when(finish('started')).thenNothingHappened(t)
  f.given([created(none, 'usr_1'), added([a], 0), published, startedEvent]).when(finish('complete')).then(t, [{ type: 'RouteFinished', data: { ...ids, finished_at: at } }])
  f.given([created(none, 'usr_1'), added([a], 0), published, blocked, startedEvent]).when(finish('failed')).then(t, [{ type: 'RouteFinished', data: { ...ids, finished_at: at } }], 'a block does not stop the life cycle')
})

t.test('organization webhooks: route.published (with the driver), route.started, route.finished', async (t) => {
  const { organizationEventOf, ORGANIZATION_EVENT_SUBJECTS } = await import('../../src/webhooks/organization-events.js')
  const recorded = (type: string, data: Record<string, unknown>, streamId = 'route-7') => ({
    id: 'e1', streamId, streamVersion: 3, position: '1', type, data, metadata: { actor: { kind: 'system' as const, id: 'x' }, occurred_at: at }, schemaVersion: 1, recordedAt: now,
  })
  t.same(organizationEventOf(recorded('RoutePublished', { ...ids, driver_id: 'usr_1', published_at: at })),
    { organization_id: 'org_1', type: 'route.published', data: { id: 7, status: 'published', driver_id: 'usr_1', published_at: at } })
  t.match(organizationEventOf(recorded('RouteStarted', { ...ids, task_ulid: 'A', started_at: at })), { type: 'route.started', data: { id: 7, status: 'started', task_ulid: 'A' } })
  t.match(organizationEventOf(recorded('RouteFinished', { ...ids, finished_at: at })), { type: 'route.finished', data: { id: 7, status: 'finished' } })
  t.equal(organizationEventOf(recorded('RoutePublished', { ...ids, driver_id: 'usr_1', published_at: at }, 'task-X')), undefined, 'only route streams')
  t.ok(ORGANIZATION_EVENT_SUBJECTS.includes('events.route.>'))
})
