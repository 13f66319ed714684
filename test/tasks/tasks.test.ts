import t from 'tap'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { newAddress, tasksWorld } from './fixtures.js'
import { createTask } from '../../src/tasks/index.js'
import { ValidationError } from '../../src/shared/errors.js'

const TASK_KEYS = [
  'address', 'arrived_at', 'assignee', 'attachments', 'cancelled_at', 'completed_at', 'created_at', 'dependencies', 'duration_minutes', 'eta',
  'failed_at', 'failure_reason', 'load', 'notes', 'position', 'requirements', 'route_id', 'shipment_id', 'signed_by', 'started_at',
  'status', 'step_key', 'time_windows', 'type', 'ulid', 'updated_at', 'workflow_id',
]

t.test('tasks in the routes API', async (t) => {
  const h = await build(t)
  const w = await tasksWorld(h)
  const { carrier, transition } = w
  const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from es_events`.execute(h.platform.db)).rows[0]!.n)

  t.test('create: every type, the address in each of the three modes, the whole task object', async (t) => {
    const res = await w.createTask({
      type: 'pickup', address: newAddress({ phone: '0341 422-1234' }), notes: ' ring twice ', duration_minutes: 10,
      time_windows: [{ from: '2026-12-01T09:00:00-03:00', to: '2026-12-01T12:00:00-03:00' }, { from: '2026-12-01T15:00:00Z', to: '2026-12-01T18:00:00Z' }],
      requirements: { complete: ['signature', 'photo'], fail: ['notes'] }, assignee_id: w.driver.id, external_reference: 'REF-1',
    })
    t.equal(res.statusCode, 201, res.body)
    const { success, task } = res.json()
    t.equal(success, true)
    t.same(Object.keys(task).sort(), TASK_KEYS)
    t.match(task.ulid, /^[0-9A-Z]{26}$/)
    t.match(task, {
      type: 'pickup', status: 'pending', shipment_id: null, workflow_id: null, step_key: null, route_id: null, position: null,
      assignee: { id: w.driver.id, name: 'Dana Driver' }, duration_minutes: 10, notes: 'ring twice', dependencies: [],
      requirements: { complete: ['signature', 'photo'], fail: ['notes'] }, load: { grams: 0, volume_cm3: 0, packages: 0 },
      signed_by: null, failure_reason: null, attachments: [], started_at: null, completed_at: null,
    })
    t.same(task.time_windows, [{ from: '2026-12-01T12:00:00.000Z', to: '2026-12-01T15:00:00.000Z' }, { from: '2026-12-01T15:00:00.000Z', to: '2026-12-01T18:00:00.000Z' }])
    t.match(task.address, { name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: { name: 'Rosario' }, state: { name: 'Santa Fe' }, country: { iso: 'AR' }, phone: '+543414221234' })
    t.type(task.address.geo_latitude, 'number', 'geocoded offline')
    const got = await h.call('GET', `/api/v1/tasks/${task.ulid}`, { token: carrier.token })
    t.equal(got.statusCode, 200)
    t.same(got.json(), task, 'GET /tasks/{ulid} at root is the same object')

    const fromPlace = await w.createTask({ type: 'delivery', address: { place_id: w.place.id } })
    t.equal(fromPlace.statusCode, 201, fromPlace.body)
    t.match(fromPlace.json().task.address, { name: 'Depot', street: 'Ruta 9', city: { name: 'Córdoba' } })
    const byId = await w.createTask({ type: 'inspection', address: { id: task.address.id } })
    t.equal(byId.statusCode, 201, byId.body)
    t.same(byId.json().task.address, task.address, 'an address a task made is reusable by id')
    for (const type of ['return', 'service']) t.equal((await w.createTask({ type, address: newAddress() })).statusCode, 201, type)
  })

  t.test('a linked shipment: the caller must carry it; the load defaults to its totals', async (t) => {
    const linked = await w.task({ shipment_id: w.shipment.id })
    t.equal(linked.shipment_id, w.shipment.id)
    t.same(linked.load, { grams: 2000, volume_cm3: 7000, packages: 2 })
    const given = await w.task({ shipment_id: w.shipment.id, load: { grams: 1, volume_cm3: 2, packages: 3 } })
    t.same(given.load, { grams: 1, volume_cm3: 2, packages: 3 })
    const partial = await w.task({ shipment_id: w.shipment.id, load: { grams: 4000, packages: 1 } })
    t.same(partial.load, { grams: 4000, volume_cm3: 0, packages: 1 }, 'a load given replaces the totals; its missing dimension is 0')
  })

  t.test('a load may name any subset of its dimensions; a missing one is 0', async (t) => {
    t.same((await w.task({ load: { grams: 4000, packages: 1 } })).load, { grams: 4000, volume_cm3: 0, packages: 1 })
    t.same((await w.task({ load: { volume_cm3: 12000 } })).load, { grams: 0, volume_cm3: 12000, packages: 0 })
    t.same((await w.task({ load: {} })).load, { grams: 0, volume_cm3: 0, packages: 0 })
    const other = await h.createOrganization({ roles: ['carrier'] })
    const notCarried = await w.createTask({ type: 'delivery', address: newAddress(), shipment_id: w.shipment.id }, other.token)
    t.equal(notCarried.statusCode, 422)
    t.ok(notCarried.json().errors.shipment_id, 'a shipment another organization carries')
  })

  t.test('422 names every failing field at once and writes nothing', async (t) => {
    const before = await eventCount()
    const res = await w.createTask({
      type: 'teleport',
      address: { name: 'x', street_number: '1', city: 'Rosario', country: 'AR', geo_latitude: 91 },
      shipment_id: 987654321,
      assignee_id: 'usr_nobody',
      time_windows: [
        { from: '2026-12-01T10:00:00Z', to: '2026-12-01T12:00:00Z' },
        { from: '2026-12-01T14:00:00Z', to: '2026-12-01T13:00:00Z' },
        { from: '2026-12-01T11:00:00Z', to: '2026-12-01T16:00:00Z' },
        { from: 'tomorrow', to: '2026-12-01T16:00:00Z' },
      ],
      dependencies: ['01ARZ3NDEKTSV4RRFFQ69G5FAV', 'not-a-ulid'],
      requirements: { complete: ['signature', 'selfie'] },
      load: { grams: -1, volume_cm3: 1.5 },
      duration_minutes: 1441,
      notes: 'n'.repeat(1001),
      colour: 'red',
    })
    t.equal(res.statusCode, 422, res.body)
    const errors = res.json().errors
    for (const k of [
      'type', 'address.street', 'address.geo_latitude', 'shipment_id', 'assignee_id', 'time_windows.1.to', 'time_windows.2.from', 'time_windows.3.from',
      'dependencies.0', 'dependencies.1', 'requirements.complete.1', 'load.grams', 'load.volume_cm3', 'duration_minutes', 'notes', 'colour',
    ]) t.ok(errors[k], `names ${k}`)
    t.equal(await eventCount(), before, 'nothing was written')
  })

  t.test('bounds one by one, and exactly at the bounds', async (t) => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['from equal to to', { time_windows: [{ from: '2026-12-01T10:00:00Z', to: '2026-12-01T10:00:00Z' }] }, 'time_windows.0.to'],
      ['unsorted windows', { time_windows: [{ from: '2026-12-02T10:00:00Z', to: '2026-12-02T11:00:00Z' }, { from: '2026-12-01T10:00:00Z', to: '2026-12-01T11:00:00Z' }] }, 'time_windows.1.from'],
      ['11 windows', { time_windows: Array.from({ length: 11 }, (_, i) => ({ from: `2026-12-${String(i + 1).padStart(2, '0')}T10:00:00Z`, to: `2026-12-${String(i + 1).padStart(2, '0')}T11:00:00Z` })) }, 'time_windows'],
      ['duplicate dependency', { dependencies: ['01ARZ3NDEKTSV4RRFFQ69G5FAV', '01ARZ3NDEKTSV4RRFFQ69G5FAV'] }, 'dependencies.1'],
      ['negative duration', { duration_minutes: -1 }, 'duration_minutes'],
      ['unknown country', { address: newAddress({ country: 'QQ' }) }, 'address.country'],
      ['unknown place', { address: { place_id: 'ple_nope' } }, 'address.place_id'],
      ['unknown address id', { address: { id: 'adr_nope' } }, 'address.id'],
      ['id and place together', { address: { id: 'adr_x', place_id: 'ple_y' } }, 'address.id'],
      ['bad phone', { address: newAddress({ phone: '12' }) }, 'address.phone'],
      ['load above the bound', { load: { grams: 1_000_000_001, volume_cm3: 0, packages: 0 } }, 'load.grams'],
      ['requirement repeated', { requirements: { fail: ['notes', 'notes'] } }, 'requirements.fail'],
      ['external reference too long', { external_reference: 'e'.repeat(51) }, 'external_reference'],
      ['no address', { address: undefined }, 'address'],
    ]
    for (const [name, over, path] of cases) {
      const res = await w.createTask({ type: 'delivery', address: newAddress(), ...over })
      t.equal(res.statusCode, 422, `${name}: ${res.body}`)
      t.ok(res.json().errors?.[path], `${name} names ${path}: ${res.body}`)
    }
    const deactivated = await h.call('POST', '/api/v1/users', { token: carrier.token, body: { name: 'Gone', email: 'gone@example.com', role: 'driver' } })
    await h.call('POST', `/api/v1/users/${deactivated.json().user.id}/deactivate`, { token: carrier.token })
    const toGone = await w.createTask({ type: 'delivery', address: newAddress(), assignee_id: deactivated.json().user.id })
    t.ok(toGone.json().errors?.assignee_id, 'a deactivated user cannot be assigned')
    const ok = await w.createTask({
      type: 'delivery', address: newAddress(), duration_minutes: 1440, notes: 'n'.repeat(1000), external_reference: 'e'.repeat(50),
      load: { grams: 1_000_000_000, volume_cm3: 0, packages: 0 },
      time_windows: [{ from: '2026-12-01T10:00:00Z', to: '2026-12-01T11:00:00Z' }, { from: '2026-12-01T11:00:00Z', to: '2026-12-01T12:00:00Z' }],
    })
    t.equal(ok.statusCode, 201, `exactly at the bounds (touching windows do not overlap): ${ok.body}`)
  })

  t.test('lifecycle: start, arrive, complete; final states are immutable', async (t) => {
    const task = await w.task()
    const started = await transition(task.ulid, 'start')
    t.equal(started.statusCode, 200, started.body)
    t.match(started.json(), { success: true, task: { status: 'started' } })
    t.ok(started.json().task.started_at)
    t.equal((await transition(task.ulid, 'start')).json().code, 'invalid_transition')
    const arrived = await transition(task.ulid, 'arrive')
    t.match(arrived.json().task, { status: 'arrived' })
    const done = await transition(task.ulid, 'complete', { signed_by: 'Ana', notes: 'left at the door' })
    t.equal(done.statusCode, 200, done.body)
    t.match(done.json().task, { status: 'complete', signed_by: 'Ana', notes: 'left at the door' })
    for (const [action, body] of [['start', undefined], ['arrive', undefined], ['complete', {}], ['fail', { reason: 'other' }], ['cancel', undefined]] as const) {
      const res = await transition(task.ulid, action, body)
      t.equal(res.statusCode, 409, `${action} after complete`)
      t.equal(res.json().code, 'task_final')
    }
    const cancelled = await w.task()
    t.match((await transition(cancelled.ulid, 'cancel', { reason: 'customer called' })).json().task, { status: 'cancelled' })
    t.equal((await transition(cancelled.ulid, 'complete')).json().code, 'task_final')
  })

  t.test('skipped steps are recorded with the same time; the events endpoint gives the audit with actors', async (t) => {
    const task = await w.task()
    const done = await transition(task.ulid, 'complete', undefined, w.dispatcher.token)
    t.equal(done.statusCode, 200, done.body)
    const { task: after } = done.json()
    t.equal(after.started_at, after.completed_at)
    t.equal(after.arrived_at, after.completed_at)
    const res = await h.call('GET', `/api/v1/tasks/${task.ulid}/events`, { token: carrier.token })
    t.equal(res.statusCode, 200)
    const events = res.json().events
    t.same(events.map((e: any) => e.type), ['TaskCreated', 'TaskStarted', 'TaskArrived', 'TaskCompleted'])
    t.match(events[1].data, { ulid: task.ulid, organization_id: carrier.id, skipped: true, started_at: after.completed_at })
    t.match(events[2].data, { skipped: true, arrived_at: after.completed_at })
    t.match(events[3].data, { ulid: task.ulid, organization_id: carrier.id, signed_by: null, notes: null, barcode: null, attachment_ids: [] })
    t.same(events[0].metadata.actor, { kind: 'organization', id: carrier.id })
    t.same(events[3].metadata.actor, { kind: 'user', id: w.dispatcher.id })
    const started = await w.task()
    await transition(started.ulid, 'start')
    const failed = await transition(started.ulid, 'fail', { reason: 'no_answer', notes: 'nobody home' })
    t.match(failed.json().task, { status: 'failed', failure_reason: 'no_answer', notes: 'nobody home' })
    const types = (await h.call('GET', `/api/v1/tasks/${started.ulid}/events`, { token: carrier.token })).json().events.map((e: any) => [e.type, e.data.skipped ?? false])
    t.same(types, [['TaskCreated', false], ['TaskStarted', false], ['TaskArrived', true], ['TaskFailed', false]])
  })

  t.test('every transition answers with the task exactly as GET shows it next', async (t) => {
    const task = await w.task({ shipment_id: w.shipment.id, assignee_id: w.driver.id, requirements: { complete: ['barcode_scan'] } })
    for (const [action, body] of [['start', undefined], ['arrive', undefined], ['complete', { barcode: 'PKG-A', signed_by: 'Ana', notes: 'done' }]] as const) {
      const res = await transition(task.ulid, action, body)
      t.equal(res.statusCode, 200, `${action}: ${res.body}`)
      t.same(res.json().task, (await h.call('GET', `/api/v1/tasks/${task.ulid}`, { token: carrier.token })).json(), action)
    }
    const skipped = await w.task()
    const failed = await transition(skipped.ulid, 'fail', { reason: 'damaged', notes: 'box crushed' })
    t.same(failed.json().task, (await h.call('GET', `/api/v1/tasks/${skipped.ulid}`, { token: carrier.token })).json(), 'fail from pending')
  })

  t.test('createTask: the entry point other modules (workflows) create tasks through', async (t) => {
    const ctx = { now: new Date(), actor: { kind: 'system' as const, id: 'workflows' } }
    const made = await createTask(h.platform, { organization: { id: carrier.id } }, { type: 'pickup', address: { place_id: w.place.id } }, ctx, { workflow_id: 42, step_key: 'pickup' })
    t.match(made, { organization_id: carrier.id, workflow_id: 42, step_key: 'pickup', type: 'pickup' })
    const listed = (await h.call('GET', '/api/v1/tasks?workflow_id=42', { token: carrier.token })).json()
    t.same(listed.data.map((x: any) => [x.ulid, x.step_key]), [[made.ulid, 'pickup']])
    const refused = await createTask(h.platform, { organization: { id: carrier.id } }, { type: 'pickup', address: { place_id: 'ple_nope' }, dependencies: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] }, ctx)
      .then(() => null, (err: unknown) => err)
    t.ok(refused instanceof ValidationError, 'a 422')
    t.same(Object.keys((refused as ValidationError).errors).sort(), ['address.place_id', 'dependencies.0'], 'the same validation, every field at once')
  })

  t.test('fail: the reason comes from the fixed list', async (t) => {
    const task = await w.task()
    for (const body of [{ reason: 'bored' }, {}, { reason: 'no_answer', extra: 1 }]) {
      const res = await transition(task.ulid, 'fail', body)
      t.equal(res.statusCode, 422, JSON.stringify(body))
    }
    t.ok((await transition(task.ulid, 'fail', { reason: 'bored' })).json().errors.reason)
    for (const reason of ['no_answer', 'bad_address', 'rejected', 'damaged', 'closed', 'other']) {
      const x = await w.task()
      const res = await transition(x.ulid, 'fail', { reason })
      t.equal(res.statusCode, 200, `${reason}: ${res.body}`)
      t.equal(res.json().task.failure_reason, reason)
    }
  })

  t.test('dependencies: a start before they are complete is 409 dependencies_pending, naming them', async (t) => {
    const a = await w.task()
    const b = await w.task()
    const dependent = await w.task({ dependencies: [a.ulid, b.ulid.toLowerCase()] })
    t.same(dependent.dependencies, [a.ulid, b.ulid])
    await transition(a.ulid, 'complete')
    for (const action of ['start', 'arrive', 'complete']) {
      const res = await transition(dependent.ulid, action)
      t.equal(res.statusCode, 409, action)
      t.equal(res.json().code, 'dependencies_pending')
      t.match(res.json().message, b.ulid)
      t.notMatch(res.json().message, a.ulid)
    }
    await transition(b.ulid, 'complete')
    t.equal((await transition(dependent.ulid, 'start')).statusCode, 200)
    const other = await h.createOrganization({ roles: ['carrier'] })
    const foreign = await w.createTask({ type: 'delivery', address: newAddress(), dependencies: [a.ulid] }, other.token)
    t.ok(foreign.json().errors?.['dependencies.0'], 'another organization\'s task is no dependency')
  })

  t.test('requirements: signature, notes, barcode of a package of the linked shipment', async (t) => {
    const task = await w.task({ shipment_id: w.shipment.id, requirements: { complete: ['signature', 'notes', 'barcode_scan'] } })
    const none = await transition(task.ulid, 'complete', {})
    t.equal(none.statusCode, 422)
    for (const k of ['signed_by', 'notes', 'barcode']) t.ok(none.json().errors[k], `names ${k}`)
    const wrong = await transition(task.ulid, 'complete', { signed_by: 'Ana', notes: 'ok', barcode: 'PKG-Z' })
    t.equal(wrong.statusCode, 422)
    t.same(Object.keys(wrong.json().errors), ['barcode'])
    t.equal((await h.call('GET', `/api/v1/tasks/${task.ulid}`, { token: carrier.token })).json().status, 'pending', 'a refused complete changes nothing')
    const right = await transition(task.ulid, 'complete', { signed_by: 'Ana', notes: 'ok', barcode: 'PKG-B' })
    t.equal(right.statusCode, 200, right.body)
    t.equal(right.json().task.signed_by, 'Ana')
    const unlinked = await w.task()
    t.ok((await transition(unlinked.ulid, 'complete', { barcode: 'PKG-A' })).json().errors?.barcode, 'a barcode needs a linked shipment to match')
    const failReq = await w.task({ requirements: { fail: ['notes'] } })
    t.ok((await transition(failReq.ulid, 'fail', { reason: 'closed' })).json().errors?.notes)
    t.equal((await transition(failReq.ulid, 'fail', { reason: 'closed', notes: 'shutters down' })).statusCode, 200)
    const unknownAttachment = await transition((await w.task()).ulid, 'complete', { attachment_ids: ['att_nope'] })
    t.ok(unknownAttachment.json().errors?.['attachment_ids.0'])
  })

  t.test('listing: paginated (perPage default 20), filtered', async (t) => {
    const org = await h.createOrganization({ roles: ['carrier'] })
    const mk = (body: Record<string, unknown>) => h.call('POST', '/api/v1/tasks', { token: org.token, body: { type: 'delivery', address: newAddress(), ...body } })
    for (let i = 0; i < 21; i++) t.equal((await mk({})).statusCode, 201)
    const pickup = (await mk({ type: 'pickup', time_windows: [{ from: '2026-12-03T22:00:00Z', to: '2026-12-04T02:00:00Z' }] })).json().task
    const first = await h.call('GET', '/api/v1/tasks', { token: org.token })
    t.equal(first.statusCode, 200)
    t.equal(first.json().data.length, 20)
    t.match(first.json().meta, { total: 22, per_page: 20, current_page: 1, last_page: 2, from: 1, to: 20 })
    const second = (await h.call('GET', '/api/v1/tasks?page=2', { token: org.token })).json()
    t.equal(second.data.length, 2)
    t.equal(second.data[1].ulid, pickup.ulid, 'oldest first')
    t.same((await h.call('GET', '/api/v1/tasks?type=pickup', { token: org.token })).json().data.map((x: any) => x.ulid), [pickup.ulid])
    for (const day of ['2026-12-03', '2026-12-04']) {
      t.same((await h.call('GET', `/api/v1/tasks?shift_date=${day}`, { token: org.token })).json().data.map((x: any) => x.ulid), [pickup.ulid], day)
    }
    t.equal((await h.call('GET', '/api/v1/tasks?shift_date=2026-12-05', { token: org.token })).json().meta.total, 0)
    await h.call('POST', `/api/v1/tasks/${pickup.ulid}/cancel`, { token: org.token })
    t.same((await h.call('GET', '/api/v1/tasks?status=cancelled', { token: org.token })).json().data.map((x: any) => x.ulid), [pickup.ulid])
    const linked = (await h.call('GET', `/api/v1/tasks?shipment_id=${w.shipment.id}`, { token: carrier.token })).json()
    t.ok(linked.data.length >= 2 && linked.data.every((x: any) => x.shipment_id === w.shipment.id))
    const assigned = (await h.call('GET', `/api/v1/tasks?assignee_id=${w.driver.id}`, { token: carrier.token })).json()
    t.ok(assigned.data.length >= 1 && assigned.data.every((x: any) => x.assignee?.id === w.driver.id))
    t.equal((await h.call('GET', '/api/v1/tasks?route_id=1', { token: carrier.token })).json().meta.total, 0, 'no task is on a route yet')
    t.equal((await h.call('GET', '/api/v1/tasks?workflow_id=1', { token: carrier.token })).json().meta.total, 0)
    t.equal((await h.call('GET', '/api/v1/tasks?status=done', { token: carrier.token })).statusCode, 422)
    t.equal((await h.call('GET', '/api/v1/tasks?perPage=101', { token: carrier.token })).statusCode, 422)
  })

  t.test('tenant isolation: another organization\'s task is 404 everywhere', async (t) => {
    const task = await w.task()
    const other = await h.createOrganization({ roles: ['carrier'] })
    for (const [method, url] of [
      ['GET', `/api/v1/tasks/${task.ulid}`], ['GET', `/api/v1/tasks/${task.ulid}/events`], ['GET', `/api/v1/tasks/${task.ulid}/attachments`],
      ['POST', `/api/v1/tasks/${task.ulid}/start`], ['POST', `/api/v1/tasks/${task.ulid}/complete`], ['POST', `/api/v1/tasks/${task.ulid}/cancel`],
      ['GET', '/api/v1/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ] as const) {
      const res = await h.call(method, url, { token: other.token })
      t.equal(res.statusCode, 404, `${method} ${url}`)
    }
    t.equal((await h.call('GET', '/api/v1/tasks', { token: other.token })).json().meta.total, 0)
    t.equal((await h.call('GET', `/api/v1/tasks/${task.ulid}`, { token: carrier.token })).json().status, 'pending', 'untouched')
  })

  t.test('a shipper-only organization gets 403 on every task route', async (t) => {
    for (const [method, url] of [['GET', '/api/v1/tasks'], ['POST', '/api/v1/tasks'], ['GET', '/api/v1/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV'], ['POST', '/api/v1/tasks/01ARZ3NDEKTSV4RRFFQ69G5FAV/cancel']] as const) {
      const res = await h.call(method, url, { token: w.shipper.token, ...(method === 'POST' ? { body: {} } : {}) })
      t.equal(res.statusCode, 403, `${method} ${url}`)
      t.equal(res.json().code, 'carrier_role_required')
    }
  })

  t.test('a driver sees and acts only on the tasks assigned to it; it cannot create tasks', async (t) => {
    const mine = await w.task({ assignee_id: w.driver.id, requirements: { complete: ['signature'] } })
    const notMine = await w.task()
    const list = (await h.call('GET', '/api/v1/tasks', { token: w.driver.token })).json()
    t.ok(list.data.length >= 1)
    t.ok(list.data.every((x: any) => x.assignee?.id === w.driver.id), 'only its own')
    t.notOk(list.data.some((x: any) => x.ulid === notMine.ulid))
    t.equal((await h.call('GET', `/api/v1/tasks/${notMine.ulid}`, { token: w.driver.token })).statusCode, 404)
    t.equal((await transition(notMine.ulid, 'start', undefined, w.driver.token)).statusCode, 404)
    t.equal((await h.call('GET', `/api/v1/tasks/${mine.ulid}`, { token: w.driver.token })).statusCode, 200)
    t.equal((await transition(mine.ulid, 'start', undefined, w.driver.token)).statusCode, 200)
    const done = await transition(mine.ulid, 'complete', { signed_by: 'Ana' }, w.driver.token)
    t.equal(done.statusCode, 200, done.body)
    const events = (await h.call('GET', `/api/v1/tasks/${mine.ulid}/events`, { token: carrier.token })).json().events
    t.same(events.at(-1).metadata.actor, { kind: 'user', id: w.driver.id }, 'the driver is the actor')
    const create = await w.createTask({ type: 'delivery', address: newAddress() }, w.driver.token)
    t.equal(create.statusCode, 403)
    t.equal(create.json().code, 'driver_not_allowed')
    t.equal((await h.call('GET', `/api/v1/tasks/${mine.ulid}/events`, { token: w.driver.token })).statusCode, 403, 'the audit is the organization\'s')
  })
})
