import t from 'tap'
import { build } from '../helpers/build.js'
import { newAddress, workflowsWorld } from './fixtures.js'

const WORKFLOW_KEYS = ['blueprint', 'cancelled_at', 'completed_at', 'created_at', 'data', 'errors', 'failed_at', 'id', 'shipment_id', 'status', 'tasks', 'updated_at']

t.test('workflows in the routes API', async (t) => {
  const h = await build(t)
  const w = await workflowsWorld(h)
  const { carrier } = w

  t.test('start by key: the spec wrapper, the whole object, the start step\'s task made in the same request', async (t) => {
    const res = await w.start({
      blueprint_key: 'pickup-delivery',
      data: {
        origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress(), notes: 'fragile',
        packages: [{ grams: 1000, length: 10, width: 10, height: 10 }, { grams: 500, length: 20, width: 10, height: 5 }],
        pickup_window: { from: '2026-12-01T09:00:00Z', to: '2026-12-01T12:00:00Z' }, delivery_window: { from: '2026-12-01T14:00:00Z', to: '2026-12-01T18:00:00Z' },
      },
    })
    t.equal(res.statusCode, 201, res.body)
    const body = res.json()
    t.same(Object.keys(body).sort(), ['success', 'workflow'])
    t.same(Object.keys(body.workflow), ['data'])
    const wf = body.workflow.data
    t.same(Object.keys(wf).sort(), WORKFLOW_KEYS)
    t.match(wf, { status: 'new', blueprint: { key: 'pickup-delivery', version: 1 }, shipment_id: null, completed_at: null, cancelled_at: null, errors: [] })
    t.equal(typeof wf.id, 'number')
    t.equal(wf.tasks.length, 1)
    t.match(wf.tasks[0], { step_key: 'pickup', type: 'pickup', status: 'pending' })
    const task = (await h.call('GET', `/api/v1/tasks/${wf.tasks[0].ulid}`, { token: carrier.token })).json()
    t.match(task, { workflow_id: wf.id, step_key: 'pickup', type: 'pickup', notes: 'fragile', address: { city: { name: 'Córdoba' } }, load: { grams: 1500, volume_cm3: 2000, packages: 2 } })
    t.same(task.time_windows, [{ from: '2026-12-01T09:00:00.000Z', to: '2026-12-01T12:00:00.000Z' }])
    const got = await w.get(wf.id)
    t.same(got, wf, 'GET /workflows/{id} at root is the same object')
  })

  t.test('start by id; addresses by id and by place_id', async (t) => {
    const first = await w.started()
    const firstTask = (await h.call('GET', `/api/v1/tasks/${first.tasks[0].ulid}`, { token: carrier.token })).json()
    const blueprints = (await h.call('GET', '/api/v1/blueprints?key=delivery', { token: carrier.token })).json().data
    const res = await w.start({ blueprint_id: blueprints[0].id, data: { origin: { id: firstTask.address.id }, destination: { place_id: w.place.id } } })
    t.equal(res.statusCode, 201, res.body)
    const wf = res.json().workflow.data
    t.match(wf, { blueprint: { id: blueprints[0].id, key: 'delivery' } })
    const task = (await h.call('GET', `/api/v1/tasks/${wf.tasks[0].ulid}`, { token: carrier.token })).json()
    t.match(task, { type: 'delivery', address: { name: 'Depot', street: 'Ruta 9' } })
  })

  t.test('with shipment_id: addresses and load come from the shipment', async (t) => {
    const wf = await w.started({ blueprint_key: 'delivery', data: { shipment_id: w.shipment.id } })
    t.equal(wf.shipment_id, w.shipment.id)
    const task = (await h.call('GET', `/api/v1/tasks/${wf.tasks[0].ulid}`, { token: carrier.token })).json()
    t.match(task, { shipment_id: w.shipment.id, load: { grams: 2000, volume_cm3: 7000, packages: 2 }, address: { city: { name: 'Rosario' } } })
    const listed = (await h.call('GET', `/api/v1/workflows?shipment_id=${w.shipment.id}`, { token: carrier.token })).json()
    t.same(listed.data.map((x: { id: number }) => x.id), [wf.id])
  })

  t.test('422 names every failing field at once', async (t) => {
    const none = await w.start({ data: {} })
    t.equal(none.statusCode, 422)
    t.ok(none.json().errors.blueprint_id)
    const unknown = await w.start({ blueprint_key: 'nope', data: { origin: { city: 'Rosario' }, destination: { id: 'adr_nope' }, pickup_window: { from: '2026-12-01T12:00:00Z', to: '2026-12-01T09:00:00Z' }, packages: [{ grams: 0 }] } })
    t.equal(unknown.statusCode, 422, unknown.body)
    const errors = unknown.json().errors
    for (const f of ['blueprint_key', 'data.origin.name', 'data.origin.street', 'data.destination.id', 'data.pickup_window.to']) t.ok(errors[f], f)
    t.ok(Object.keys(errors).some((k) => k.startsWith('data.packages.0')), 'the package is named')
    const missing = await w.start({ blueprint_key: 'pickup-delivery', data: { destination: newAddress() } })
    t.equal(missing.statusCode, 422)
    t.ok(missing.json().errors['data.origin'], 'a step takes its address from origin')
    const notCarried = await w.start({ blueprint_key: 'delivery', data: { shipment_id: 999999 } })
    t.ok(notCarried.json().errors['data.shipment_id'])
    const draft = await h.call('POST', '/api/v1/blueprints', { token: carrier.token, body: { key: 'drafty', name: 'Draft', steps: [{ key: 'a', name: 'A', task: { type: 'service', address: 'origin' } }], start_steps: ['a'] } })
    t.equal(draft.statusCode, 201)
    const unpublished = await w.start({ blueprint_id: draft.json().blueprint.id, data: { origin: newAddress() } })
    t.match(unpublished.json().errors.blueprint_id, [/publish/])
  })

  t.test('cancel: the spec wrapper, open tasks cancelled, final is 409', async (t) => {
    const wf = await w.started()
    const res = await h.call('POST', `/api/v1/workflows/${wf.id}/cancel`, { token: carrier.token })
    t.equal(res.statusCode, 200, res.body)
    const body = res.json()
    t.same(Object.keys(body), ['data'])
    t.same(Object.keys(body.data), ['workflow'])
    t.match(body.data.workflow, { id: wf.id, status: 'cancelled', tasks: [{ status: 'cancelled' }] })
    t.type(body.data.workflow.cancelled_at, 'string')
    const again = await h.call('POST', `/api/v1/workflows/${wf.id}/cancel`, { token: carrier.token })
    t.equal(again.statusCode, 409)
    t.equal(again.json().code, 'workflow_final')
    const events = (await h.call('GET', `/api/v1/workflows/${wf.id}/events`, { token: carrier.token })).json().events
    t.same(events.map((e: { type: string }) => e.type), ['WorkflowCreated', 'WorkflowTaskCreated', 'WorkflowCancelled'])
  })

  t.test('list with filters and pagination', async (t) => {
    const res = await h.call('GET', '/api/v1/workflows?status=cancelled&perPage=1', { token: carrier.token })
    t.equal(res.statusCode, 200)
    const page = res.json()
    t.equal(page.data.length, 1)
    t.equal(page.data[0].status, 'cancelled')
    t.equal(page.meta.total, 1)
    const byKey = (await h.call('GET', '/api/v1/workflows?blueprint_key=delivery', { token: carrier.token })).json()
    t.ok(byKey.data.length >= 2)
    t.ok(byKey.data.every((x: { blueprint: { key: string } }) => x.blueprint.key === 'delivery'))
  })

  t.test('tenant isolation and the carrier role', async (t) => {
    const wf = await w.started()
    const other = await h.createOrganization({ roles: ['carrier'] })
    t.equal((await h.call('GET', `/api/v1/workflows/${wf.id}`, { token: other.token })).statusCode, 404)
    t.equal((await h.call('POST', `/api/v1/workflows/${wf.id}/cancel`, { token: other.token })).statusCode, 404)
    t.equal((await h.call('GET', `/api/v1/workflows/${wf.id}/events`, { token: other.token })).statusCode, 404)
    t.equal((await h.call('GET', '/api/v1/workflows', { token: other.token })).json().data.length, 0)
    const shipperOnly = await w.start({ blueprint_key: 'delivery', data: { destination: newAddress() } }, w.shipper.token)
    t.equal(shipperOnly.statusCode, 403)
    t.equal(shipperOnly.json().code, 'carrier_role_required')
    const driver = await h.call('GET', '/api/v1/workflows', { token: w.driver.token })
    t.equal(driver.statusCode, 403)
  })
})
