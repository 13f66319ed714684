import t, { type Test } from 'tap'
import { AppError, ValidationError } from '../../src/shared/errors.js'
import {
  foldShipment, shipmentDecider, type ShipmentCommand, type ShipmentEvent,
} from '../../src/shipments/shipment.js'
import { CREATED_AT, shipmentCreated } from './fixtures/shipment-created.js'

// Given events / when command / then events (or then error), no database.

const at = (minutes: number) => new Date(Date.parse(CREATED_AT) + minutes * 60_000).toISOString()
const label = { key: 'labels/42/label.pdf', content_type: 'application/pdf', size: 10, sha256: 'x', filename: 'label.pdf' }

const created: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated() }
const documented: ShipmentEvent = { type: 'ShipmentDocumented', data: { label, label_zpl: null, waybill: null, documented_at: at(1) } }
const ready: ShipmentEvent = { type: 'ShipmentReady', data: { ready_at: at(2) } }

function decide(given: ShipmentEvent[], when: ShipmentCommand): ShipmentEvent[] {
  return shipmentDecider.decide(when, foldShipment(given))
}

function thenError(t: Test, given: ShipmentEvent[], when: ShipmentCommand, status: number, code?: string): AppError {
  try {
    decide(given, when)
  } catch (err) {
    t.ok(err instanceof AppError, 'an AppError')
    const e = err as AppError
    t.equal(e.statusCode, status)
    if (code) t.equal(e.code, code)
    return e
  }
  t.fail('expected an error')
  throw new Error('unreachable')
}

const report = (status: string, extra: Partial<Extract<ShipmentCommand, { type: 'ReportCarrierStatus' }>['data']> = {}): ShipmentCommand => ({
  type: 'ReportCarrierStatus', data: { status, reported_at: at(60), ...extra },
})

function reported(status: string, reason: string | null = null, minutes = 30): ShipmentEvent {
  const events = decide([created, documented, ready], report(status, { reason, occurred_at: at(minutes) }))
  return events[0]!
}

t.test('create', async (t) => {
  t.same(decide([], { type: 'CreateShipment', data: created.data as never }), [created])
  thenError(t, [created], { type: 'CreateShipment', data: created.data as never }, 409, 'shipment_exists')
  const s = foldShipment([created])
  t.equal(s.phase, 'processing')
  t.equal(s.routesStatus, 'pending')
  t.equal(s.substatus, 'processing')
  const sr = foldShipment([{ type: 'ShipmentCreated', data: shipmentCreated({ integration: 'service_routes' }) }])
  t.equal(sr.phase, 'pending_preparation', 'a service_routes shipment needs no upload')
  t.ok(sr.documented)
})

t.test('upload documents: Processing → Pending preparation', async (t) => {
  const events = decide([created], { type: 'UploadDocuments', data: { label, documented_at: at(1) } })
  t.same(events, [documented])
  const s = foldShipment([created, ...events])
  t.equal(s.phase, 'pending_preparation')
  t.equal(s.substatus, 'pending_preparation')
  t.equal(decide([created, documented], { type: 'UploadDocuments', data: { label, documented_at: at(3) } }).length, 1, 'a replacement is accepted')
  thenError(t, [created, documented, reported('received')], { type: 'UploadDocuments', data: { label, documented_at: at(70) } }, 409, 'shipment_in_transit')
  thenError(t, [], { type: 'UploadDocuments', data: { label, documented_at: at(1) } }, 404)
})

t.test('mark ready', async (t) => {
  thenError(t, [created], { type: 'MarkReady', data: { ready_at: at(2) } }, 409, 'shipment_not_documented')
  t.same(decide([created, documented], { type: 'MarkReady', data: { ready_at: at(2) } }), [ready])
  t.same(decide([created, documented, ready], { type: 'MarkReady', data: { ready_at: at(3) } }), [], 'repeat appends nothing')
  const sr: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated({ integration: 'service_routes' }) }
  t.equal(decide([sr], { type: 'MarkReady', data: { ready_at: at(2) } })[0]?.type, 'ShipmentReady')
  t.equal(foldShipment([created, documented, ready]).substatus, 'ready_to_ship')
  thenError(t, [created, documented, reported('received')], { type: 'MarkReady', data: { ready_at: at(70) } }, 409, 'shipment_in_transit')
})

t.test('cancel', async (t) => {
  const cancel: ShipmentCommand = { type: 'CancelShipment', data: { cancelled_at: at(5) } }
  for (const given of [[created], [created, documented], [created, documented, ready]]) {
    t.same(decide(given, cancel), [{ type: 'ShipmentCancelled', data: { cancelled_at: at(5), reason: null } }])
  }
  const cancelled: ShipmentEvent = { type: 'ShipmentCancelled', data: { cancelled_at: at(5), reason: null } }
  t.equal(foldShipment([created, cancelled]).routesStatus, 'cancelled')
  thenError(t, [created, cancelled], cancel, 409, 'shipment_cancelled')
  thenError(t, [created, documented, reported('received')], cancel, 409, 'shipment_in_transit')
  thenError(t, [created, documented, reported('delivered')], cancel, 409, 'shipment_final')
  thenError(t, [created, { type: 'ShipmentExpired', data: { expired_at: at(9000) } }], cancel, 409, 'shipment_expired')
  thenError(t, [], cancel, 404)
})

t.test('report carrier status: 409 before the label', async (t) => {
  thenError(t, [created], report('received'), 409, 'shipment_not_documented')
})

t.test('report carrier status: mapping to the routes API status', async (t) => {
  const cases: [string, string | null, string, string | null][] = [
    ['received', null, 'picked_up', null],
    ['out_for_delivery', null, 'out_for_delivery', null],
    ['soon_deliver', null, 'out_for_delivery', 'soon_deliver'],
    ['failed_delivery', 'receiver_absent', 'attempted_delivery', 'receiver_absent'],
    ['delivered', null, 'delivered', null],
    ['not_delivered', 'lost', 'not_delivered', 'lost'],
    ['returned', null, 'returned', null],
  ]
  for (const [status, reason, routes, sub] of cases) {
    const e = reported(status, reason)
    t.equal(e.type, 'CarrierStatusReported')
    const d = e.data as { routes_status: string; substatus: string | null; final: boolean }
    t.equal(d.routes_status, routes, status)
    t.equal(d.substatus, sub, `${status} substatus`)
    t.equal(d.final, ['delivered', 'not_delivered', 'returned'].includes(status))
    const s = foldShipment([created, documented, ready, e])
    t.equal(s.phase, 'in_carrier_hands')
    t.equal(s.routesStatus, routes)
  }
  t.equal(decide([created, documented], report('received')).length, 1, 'documented is enough (no ready needed)')
})

t.test('report carrier status: reason, message and occurred_at rules (all errors at once)', async (t) => {
  const given = [created, documented]
  let e = thenError(t, given, report('failed_delivery'), 422) as ValidationError
  t.ok(e.errors.reason)
  e = thenError(t, given, report('failed_delivery', { reason: 'aliens' }), 422) as ValidationError
  t.ok(e.errors.reason)
  e = thenError(t, given, report('not_delivered', { reason: 'rejected' }), 422) as ValidationError
  t.ok(e.errors.reason)
  e = thenError(t, given, report('not_delivered'), 422) as ValidationError
  t.ok(e.errors.reason)
  e = thenError(t, given, report('received', { reason: 'lost' }), 422) as ValidationError
  t.ok(e.errors.reason)
  e = thenError(t, given, report('teleported'), 422) as ValidationError
  t.ok(e.errors.status)
  t.equal(decide(given, report('received', { message: 'x'.repeat(150) })).length, 1, '150 characters is fine')
  e = thenError(t, given, report('received', { message: 'x'.repeat(151), occurred_at: at(-1) }), 422) as ValidationError
  t.same(Object.keys(e.errors).sort(), ['message', 'occurred_at'], 'both failing fields are named')
  t.equal(decide(given, report('received', { occurred_at: CREATED_AT })).length, 1, 'exactly at creation is fine')
  e = thenError(t, given, report('received', { occurred_at: 'yesterday' }), 422) as ValidationError
  t.ok(e.errors.occurred_at)
  e = thenError(t, given, report('received', { occurred_at: at(60 + 6) }), 422) as ValidationError
  t.ok(e.errors.occurred_at, 'more than 5 minutes ahead of the clock')
  const d = decide(given, report('received'))[0]!.data as { occurred_at: string }
  t.equal(d.occurred_at, at(60), 'occurred_at defaults to the report time')
})

t.test('report carrier status: finals are immutable', async (t) => {
  for (const [status, reason] of [['delivered', null], ['not_delivered', 'lost'], ['returned', null]] as const) {
    const final = reported(status, reason)
    thenError(t, [created, documented, ready, final], report('out_for_delivery'), 409, 'shipment_final')
    thenError(t, [created, documented, ready, final], report('delivered', { occurred_at: at(45) }), 409, 'shipment_final')
    t.same(decide([created, documented, ready, final], report(status, { reason, occurred_at: at(30) })), [], 'the same final report again is a no-op retry')
  }
})

t.test('report carrier status: failed delivery and the return flow', async (t) => {
  const absent = reported('failed_delivery', 'receiver_absent')
  t.equal(decide([created, documented, absent], report('out_for_delivery')).length, 1, 'can go out again')
  t.equal(decide([created, documented, absent], report('delivered')).length, 1, 'can still be delivered')
  for (const reason of ['rejected', 'dangerous_area']) {
    const back = reported('failed_delivery', reason)
    t.ok((back.data as { in_return: boolean }).in_return)
    thenError(t, [created, documented, back], report('delivered'), 409, 'shipment_in_return')
    const out = decide([created, documented, back], report('out_for_delivery'))
    t.ok((out[0]!.data as { in_return: boolean }).in_return, 'the return flow stays on')
    thenError(t, [created, documented, back, ...out], report('delivered', { occurred_at: at(61) }), 409, 'shipment_in_return')
    t.equal(decide([created, documented, back], report('returned'))[0]!.type, 'CarrierStatusReported')
  }
})

t.test('report carrier status: annulled shipments refuse reports', async (t) => {
  const cancelled: ShipmentEvent = { type: 'ShipmentCancelled', data: { cancelled_at: at(5), reason: null } }
  thenError(t, [created, documented, cancelled], report('received'), 409, 'shipment_cancelled')
  thenError(t, [], report('received'), 404)
})

t.test('set tracking', async (t) => {
  const cmd: ShipmentCommand = { type: 'SetTracking', data: { tracking_number: ' TN1 ', tracking_url: null, set_at: at(3) } }
  const events = decide([created], cmd)
  t.same(events, [{ type: 'TrackingNumberSet', data: { tracking_number: 'TN1', tracking_url: null, set_at: at(3) } }])
  t.same(decide([created, ...events], cmd), [], 'same number again appends nothing')
  thenError(t, [created], { type: 'SetTracking', data: { tracking_number: ' ', set_at: at(3) } }, 422)
  thenError(t, [created, { type: 'ShipmentCancelled', data: { cancelled_at: at(5), reason: null } }], cmd, 409)
})

t.test('expire', async (t) => {
  const cmd = (hours: number): ShipmentCommand => ({ type: 'ExpireShipment', data: { now: at(hours * 60), expiry_hours: 168 } })
  t.same(decide([created], cmd(167)), [], 'not yet')
  t.same(decide([created], cmd(168)), [{ type: 'ShipmentExpired', data: { expired_at: at(168 * 60) } }])
  t.same(decide([created, documented], cmd(200)).length, 1, 'pending preparation expires too')
  t.same(decide([created, documented, ready], cmd(200)), [], 'ready shipments do not expire')
  t.same(decide([], cmd(200)), [])
  const s = foldShipment([created, ...decide([created], cmd(168))])
  t.equal(s.routesStatus, 'cancelled')
  t.equal(s.substatus, 'expired')
})

t.test('print label: only the first retrieval is recorded', async (t) => {
  const cmd: ShipmentCommand = { type: 'PrintLabel', data: { printed_at: at(4), format: 'pdf', source: 'platform' } }
  const events = decide([created], cmd)
  t.equal(events.length, 1)
  t.same(decide([created, ...events], { ...cmd, data: { ...cmd.data, printed_at: at(9) } } as ShipmentCommand), [])
  t.equal(foldShipment([created, ...events]).labelPrintedAt, at(4))
})
