import t from 'tap'
import { build } from '../helpers/build.js'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { decider, routesStatusEventId, setShipmentStatusFromRoutes, type SetRoutesStatus } from '../../src/shipments/routes-status.js'
import { decider as reportDecider } from '../../src/shipments/report-carrier-status.js'
import { shipmentStream, type ShipmentEvent } from '../../src/shipments/shipment.js'
import { IllegalStateError, NotFoundError, ValidationError } from '../../src/shared/errors.js'
import type { CommandContext } from '../../src/shared/command-handler.js'
import { CREATED_AT, shipmentCreated } from './fixtures/shipment-created.js'
import { createShipment as createHubShipment } from '../notifications/fixtures/shipments.js'

// ── Given / when / then on the decider (no database) ──────────────────────────────────────

const at = (minutes: number) => new Date(Date.parse(CREATED_AT) + minutes * 60_000).toISOString()
const routesCreated: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated({ integration: 'service_routes' }) }
const customCreated: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated({ integration: 'custom' }) }
const set = (status: string, over: Partial<SetRoutesStatus['data']> = {}): SetRoutesStatus =>
  ({ type: 'SetRoutesStatus', data: { status, substatus: null, set_at: at(10), ...over } })
const reported = (over: Record<string, unknown>): ShipmentEvent => ({
  type: 'StatusReported',
  data: {
    status: 'received', reason: null, message: null, occurred_at: at(10), reported_at: at(10), routes_status: 'picked_up', substatus: null,
    in_return: false, final: false, source: 'routes', signed_by: null, key: null, ...over,
  } as any,
})

t.test('decider: each settable status becomes the carrier-side StatusReported it stands for, marked source routes', async (t) => {
  const spec = DeciderSpecification.for(decider)
  spec.given([routesCreated]).when(set('picked_up')).then(t, [reported({})])
  spec.given([routesCreated]).when(set('delivered', { signed_by: ' Ana Gómez ', occurred_at: at(7), key: 'k1' }))
    .then(t, [reported({ status: 'delivered', routes_status: 'delivered', final: true, signed_by: 'Ana Gómez', occurred_at: at(7), key: 'k1' })])
  spec.given([routesCreated]).when(set('attempted_delivery', { reason: 'no_answer' }))
    .then(t, [reported({ status: 'failed_delivery', routes_status: 'attempted_delivery', reason: 'no_answer', substatus: 'no_answer' })], 'the reason is the substatus')
  spec.given([routesCreated]).when(set('attempted_delivery', { reason: 'rejected' }))
    .then(t, [reported({ status: 'failed_delivery', routes_status: 'attempted_delivery', reason: 'rejected', substatus: 'rejected', in_return: false })], 'a rejection starts no return: the blueprint decides')
  spec.given([routesCreated]).when(set('not_delivered', { reason: 'closed' }))
    .then(t, [reported({ status: 'not_delivered', routes_status: 'not_delivered', reason: 'closed', substatus: null, final: true })], 'closed is no substatus of not_delivered: kept as the reason')
})

t.test('decider: refusals', async (t) => {
  const spec = DeciderSpecification.for(decider)
  spec.given([]).when(set('delivered')).thenThrows(t, NotFoundError)
  spec.given([customCreated]).when(set('delivered')).thenThrows(t, IllegalStateError, { code: 'carrier_not_service_routes' })
  const err = spec.given([routesCreated]).when(set('cancelled', { reason: 'tired', substatus: 'x', occurred_at: 'yesterday' }))
    .thenThrows(t, ValidationError) as ValidationError
  t.same(Object.keys(err.errors).sort(), ['occurred_at', 'reason', 'status'], 'every bad field at once')
  const sub = spec.given([routesCreated]).when(set('attempted_delivery', { substatus: 'lost', signed_by: 'Ana' })).thenThrows(t, ValidationError) as ValidationError
  t.same(Object.keys(sub.errors).sort(), ['signed_by', 'substatus'])
  const delivered = reported({ status: 'delivered', routes_status: 'delivered', final: true })
  spec.given([routesCreated, delivered]).when(set('attempted_delivery', { reason: 'no_answer' })).thenThrows(t, IllegalStateError, { code: 'shipment_final' })
  spec.given([routesCreated, { type: 'ShipmentCancelled', data: { cancelled_at: at(1), reason: null } }]).when(set('picked_up'))
    .thenThrows(t, IllegalStateError, { code: 'shipment_cancelled' })
  // A return the carrier API began (a service_routes hub carrier may still report) blocks delivered, as for reports.
  spec.given([routesCreated, reported({ status: 'failed_delivery', routes_status: 'attempted_delivery', reason: 'rejected', in_return: true, source: undefined })])
    .when(set('delivered')).thenThrows(t, IllegalStateError, { code: 'shipment_in_return' })
})

t.test('decider: a key already applied is a no-op, even once the shipment is final; another key is decided', async (t) => {
  const spec = DeciderSpecification.for(decider)
  const delivered = reported({ status: 'delivered', routes_status: 'delivered', final: true, key: 'wf:1:action:0' })
  spec.given([routesCreated, delivered]).when(set('delivered', { key: 'wf:1:action:0' })).thenNothingHappened(t)
  spec.given([routesCreated, reported({ key: 'a' })]).when(set('picked_up', { key: 'a' })).thenNothingHappened(t)
  spec.given([routesCreated, reported({ key: 'a' })]).when(set('out_for_delivery', { key: 'b' }))
    .then(t, [reported({ status: 'out_for_delivery', routes_status: 'out_for_delivery', key: 'b' })])
  spec.given([routesCreated, delivered]).when(set('delivered', { key: 'other' })).thenThrows(t, IllegalStateError, { code: 'shipment_final' })
  t.equal(routesStatusEventId(7, 'a'), routesStatusEventId(7, 'a'), 'one key, one event id')
  t.not(routesStatusEventId(7, 'a'), routesStatusEventId(8, 'a'), 'per shipment')
  t.match(routesStatusEventId(7, 'a'), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})

t.test('decider: the carrier API\'s report decider reads a routes status as any other (final holds)', async (t) => {
  const delivered = reported({ status: 'delivered', routes_status: 'delivered', final: true })
  DeciderSpecification.for(reportDecider).given([routesCreated, delivered])
    .when({ type: 'ReportCarrierStatus', data: { status: 'returned', reported_at: at(20) } })
    .thenThrows(t, IllegalStateError, { code: 'shipment_final' })
})

// ── Through the platform, on a real database ──────────────────────────────────────────────

const newAddress = (over: Record<string, unknown> = {}) => ({
  name: 'Ana Gómez', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', zipcode: '5000', ...over,
})

t.test('setShipmentStatusFromRoutes on a service_routes shipment, as the shipper and the carrier read it', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ name: 'Routes Carrier', roles: ['carrier'], currency: 'ARS' })
  const shipper = await h.createOrganization({ name: 'Shop', roles: ['shipper'], currency: 'ARS' })
  await h.signContract(carrier.id, shipper.id)
  const ship = async () => {
    const res = await h.call('POST', '/api/v1/shipments', {
      token: shipper.token,
      body: { carrier_id: carrier.id, origin: newAddress({ name: 'Warehouse' }), destination: newAddress(), packages: [{ grams: 500, length: 10, width: 10, height: 10 }] },
    })
    t.equal(res.statusCode, 201, res.body)
    return res.json().shipment.id as number
  }
  const ctx = (): CommandContext => ({ now: h.platform.clock(), actor: { kind: 'system', id: 'process-manager' } })
  const get = async (id: number, token = shipper.token) => (await h.call('GET', `/api/v1/shipments/${id}`, { token })).json()
  const tracking = async (id: number) => (await h.call('GET', `/api/v1/shipments/${id}/tracking`, { token: shipper.token })).json().tracking as any[]

  t.test('picked up, out for delivery, delivered with signed_by: source routes in the tracking', async (t) => {
    const id = await ship()
    t.match(await setShipmentStatusFromRoutes(h.platform, id, 'picked_up', null, ctx()), { changed: true, status: 'picked_up', substatus: null })
    await setShipmentStatusFromRoutes(h.platform, id, 'out_for_delivery', null, ctx())
    const done = await setShipmentStatusFromRoutes(h.platform, id, 'delivered', null, ctx(), { signed_by: 'Beto Pérez' })
    t.match(done, { changed: true, status: 'delivered' })
    const shipment = await get(id)
    t.equal(shipment.status.code, 'delivered')
    t.ok(shipment.delivered_at && shipment.finished_at && shipment.shipped_at, 'delivered, finished and shipped times set')
    const items = await tracking(id)
    t.same(items.map((i) => i.status.code), ['pending', 'picked_up', 'out_for_delivery', 'delivered'])
    t.same(items.slice(1).map((i) => i.source), ['routes', 'routes', 'routes'])
    t.match(items[3], { carrier_status: 'delivered', signed_by: 'Beto Pérez', reason: null })
    t.equal(items[0].signed_by, null)
    const asCarrier = await get(id, carrier.token)
    t.equal(asCarrier.status.code, 'delivered', 'the carrier organization sees it as well')
    const events = (await h.call('GET', `/api/v1/shipments/${id}/events`, { token: shipper.token })).json().events
    t.match(events.at(-1), { type: 'StatusReported', data: { source: 'routes', signed_by: 'Beto Pérez', routes_status: 'delivered' }, metadata: { actor: { kind: 'system' } } })
    const label = await h.call('GET', `/api/v1/shipments/${id}/label`, { token: shipper.token })
    t.equal(label.statusCode, 200, 'the platform still makes the label')
    t.equal(label.headers['content-type'], 'application/pdf')
  })

  t.test('attempted delivery with its reason, then not delivered; a final state refuses more', async (t) => {
    const id = await ship()
    await setShipmentStatusFromRoutes(h.platform, id, 'attempted_delivery', null, ctx(), { reason: 'no_answer' })
    const s1 = await get(id)
    t.same([s1.status.code, s1.status.substatus], ['attempted_delivery', { code: 'no_answer', name: 'No answer' }])
    await setShipmentStatusFromRoutes(h.platform, id, 'attempted_delivery', null, ctx(), { reason: 'bad_address' })
    await setShipmentStatusFromRoutes(h.platform, id, 'not_delivered', null, ctx(), { reason: 'closed' })
    const s2 = await get(id)
    t.equal(s2.status.code, 'not_delivered')
    t.ok(s2.finished_at)
    const items = await tracking(id)
    t.same(items.slice(1).map((i) => [i.status.code, i.substatus?.code ?? null, i.reason, i.source]), [
      ['attempted_delivery', 'no_answer', 'no_answer', 'routes'],
      ['attempted_delivery', 'bad_address', 'bad_address', 'routes'],
      ['not_delivered', null, 'closed', 'routes'],
    ])
    await t.rejects(setShipmentStatusFromRoutes(h.platform, id, 'delivered', null, ctx()), { code: 'shipment_final' })
    t.equal((await tracking(id)).length, 4, 'nothing recorded by the refusal')
    const report = await h.call('GET', `/api/v1/shipments/${id}`, { token: shipper.token })
    t.equal(report.json().status.code, 'not_delivered')
  })

  t.test('idempotent with a key: a repeat appends nothing and answers the state, even after final', async (t) => {
    const id = await ship()
    const key = `workflow:1:step:delivery:attempt:1:action:0`
    const first = await setShipmentStatusFromRoutes(h.platform, id, 'delivered', null, ctx(), { signed_by: 'Ana', key })
    const again = await setShipmentStatusFromRoutes(h.platform, id, 'delivered', null, ctx(), { signed_by: 'Ana', key })
    t.match(first, { changed: true, status: 'delivered' })
    t.match(again, { changed: false, status: 'delivered' })
    const stream = await h.platform.store.readStream(shipmentStream(id))
    t.equal(stream.filter((e) => e.type === 'StatusReported').length, 1, 'one event')
    t.equal(stream.at(-1)!.id, routesStatusEventId(id, key), 'its id drawn from the key')
    t.equal((await tracking(id)).filter((i) => i.status.code === 'delivered').length, 1)
    await t.rejects(setShipmentStatusFromRoutes(h.platform, id, 'delivered', null, ctx(), { key: 'another' }), { code: 'shipment_final' })
  })

  t.test('two calls with one key at once: one event', async (t) => {
    const id = await ship()
    const results = await Promise.all([1, 2, 3].map(() => setShipmentStatusFromRoutes(h.platform, id, 'picked_up', null, ctx(), { key: 'same' })))
    t.ok(results.every((r) => r.status === 'picked_up'))
    const stream = await h.platform.store.readStream(shipmentStream(id))
    t.equal(stream.filter((e) => e.type === 'StatusReported').length, 1)
  })

  t.test('a cancelled shipment refuses; a custom carrier\'s shipment refuses; an unknown one is not found', async (t) => {
    const id = await ship()
    t.equal((await h.call('POST', `/api/v1/shipments/${id}/cancel`, { token: shipper.token })).statusCode, 200)
    await t.rejects(setShipmentStatusFromRoutes(h.platform, id, 'picked_up', null, ctx()), { code: 'shipment_cancelled' })
    const custom = await createHubShipment(h.platform, { id: 'car_custom', integration: 'custom' })
    await t.rejects(setShipmentStatusFromRoutes(h.platform, custom, 'delivered', null, ctx()), { code: 'carrier_not_service_routes' })
    t.equal((await h.platform.store.readStream(shipmentStream(custom))).length, 1, 'nothing appended')
    await t.rejects(setShipmentStatusFromRoutes(h.platform, 987654321, 'delivered', null, ctx()), { code: 'not_found' })
    await t.rejects(setShipmentStatusFromRoutes(h.platform, id, 'in_facility', null, ctx()), { code: 'validation_failed', errors: { status: [/cannot set/] } })
  })
})
