import t from 'tap'
import { IllegalStateError, NotFoundError, ValidationError } from '../../src/shared/errors.js'
import { foldShipment, type ShipmentEvent } from '../../src/shipments/shipment.js'
import { shipmentDecider, type ShipmentCommand } from './fixtures/shipment-commands.js'
import { DeciderSpecification } from '../helpers/decider-specification.js'
import { CREATED_AT, shipmentCreated } from './fixtures/shipment-created.js'

// Given events / when command / then events (or then error), no database.

const spec = DeciderSpecification.for(shipmentDecider)
const at = (minutes: number) => new Date(Date.parse(CREATED_AT) + minutes * 60_000).toISOString()
const label = { key: 'labels/42/label.pdf', content_type: 'application/pdf', size: 10, sha256: 'x', filename: 'label.pdf' }

const created: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated() }
const documented: ShipmentEvent = { type: 'LabelUploaded', data: { label, label_zpl: null, waybill: null, documented_at: at(1) } }
const ready: ShipmentEvent = { type: 'ShipmentReady', data: { ready_at: at(2) } }
const cancelled: ShipmentEvent = { type: 'ShipmentCancelled', data: { cancelled_at: at(5), reason: null } }

const report = (status: string, extra: Partial<Extract<ShipmentCommand, { type: 'ReportCarrierStatus' }>['data']> = {}): ShipmentCommand => ({
  type: 'ReportCarrierStatus', data: { status, reported_at: at(60), ...extra },
})

/** A given event: the report the decider makes of a documented, ready shipment. */
function reported(status: string, reason: string | null = null, minutes = 30): ShipmentEvent {
  const given = [created, documented, ready].reduce(shipmentDecider.evolve, shipmentDecider.initialState())
  return shipmentDecider.decide(report(status, { reason, occurred_at: at(minutes) }), given)[0]!
}

t.test('create', async (t) => {
  const create: ShipmentCommand = { type: 'CreateShipment', data: created.data as never }
  spec.given([]).when(create).then(t, [created])
  spec.given([created]).when(create).thenThrows(t, IllegalStateError, { code: 'shipment_exists' })
  const s = foldShipment([created])
  t.equal(s.phase, 'processing')
  t.equal(s.routesStatus, 'pending')
  t.equal(s.substatus, 'processing')
  const sr = foldShipment([{ type: 'ShipmentCreated', data: shipmentCreated({ integration: 'service_routes' }) }])
  t.equal(sr.phase, 'pending_preparation', 'a service_routes shipment needs no upload')
  t.ok(sr.documented)
})

t.test('upload documents: Processing → Pending preparation', async (t) => {
  const upload = (minutes: number): ShipmentCommand => ({ type: 'UploadDocuments', data: { label, documented_at: at(minutes) } })
  const events = spec.given([created]).when(upload(1)).then(t, [documented])
  const s = foldShipment([created, ...events])
  t.equal(s.phase, 'pending_preparation')
  t.equal(s.substatus, 'pending_preparation')
  spec.given([created, documented]).when(upload(3))
    .then(t, [{ type: 'LabelUploaded', data: { label, label_zpl: null, waybill: null, documented_at: at(3) } }], 'a replacement is accepted')
  spec.given([created, documented, reported('received')]).when(upload(70)).thenThrows(t, IllegalStateError, { code: 'shipment_in_transit' })
  spec.given([]).when(upload(1)).thenThrows(t, NotFoundError, { code: 'not_found' })
})

t.test('mark ready', async (t) => {
  const markReady = (minutes: number): ShipmentCommand => ({ type: 'MarkReady', data: { ready_at: at(minutes) } })
  spec.given([created]).when(markReady(2)).thenThrows(t, IllegalStateError, { code: 'shipment_not_documented' })
  spec.given([created, documented]).when(markReady(2)).then(t, [ready])
  spec.given([created, documented, ready]).when(markReady(3)).thenNothingHappened(t, 'repeat appends nothing')
  const sr: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated({ integration: 'service_routes' }) }
  spec.given([sr]).when(markReady(2)).then(t, [ready], 'a service_routes shipment is ready without an upload')
  t.equal(foldShipment([created, documented, ready]).substatus, 'ready_to_ship')
  spec.given([created, documented, reported('received')]).when(markReady(70)).thenThrows(t, IllegalStateError, { code: 'shipment_in_transit' })
})

t.test('cancel', async (t) => {
  const cancel: ShipmentCommand = { type: 'CancelShipment', data: { cancelled_at: at(5) } }
  for (const given of [[created], [created, documented], [created, documented, ready]]) {
    spec.given(given).when(cancel).then(t, [cancelled])
  }
  t.equal(foldShipment([created, cancelled]).routesStatus, 'cancelled')
  spec.given([created, cancelled]).when(cancel).thenThrows(t, IllegalStateError, { code: 'shipment_cancelled' })
  spec.given([created, documented, reported('received')]).when(cancel).thenThrows(t, IllegalStateError, { code: 'shipment_in_transit' })
  spec.given([created, documented, reported('delivered')]).when(cancel).thenThrows(t, IllegalStateError, { code: 'shipment_final' })
  spec.given([created, { type: 'ShipmentExpired', data: { expired_at: at(9000) } }]).when(cancel)
    .thenThrows(t, IllegalStateError, { code: 'shipment_expired' })
  spec.given([]).when(cancel).thenThrows(t, NotFoundError, { code: 'not_found' })
})

t.test('report carrier status: 409 before the label', async (t) => {
  spec.given([created]).when(report('received')).thenThrows(t, IllegalStateError, { code: 'shipment_not_documented' })
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
    const [e] = spec.given([created, documented, ready]).when(report(status, { reason, occurred_at: at(30) })).then(t, [{
      type: 'StatusReported',
      data: {
        status: status as never, reason, message: null, occurred_at: at(30), reported_at: at(60),
        routes_status: routes as never, substatus: sub, in_return: false, final: ['delivered', 'not_delivered', 'returned'].includes(status),
      },
    }], status)
    const s = foldShipment([created, documented, ready, e!])
    t.equal(s.phase, 'in_carrier_hands')
    t.equal(s.routesStatus, routes)
  }
  spec.given([created, documented]).when(report('received')).thenMatches(t, [{ type: 'StatusReported' }], 'documented is enough (no ready needed)')
})

t.test('report carrier status: reason, message and occurred_at rules (all errors at once)', async (t) => {
  const given = spec.given([created, documented])
  const invalid = (command: ShipmentCommand, field: string) =>
    given.when(command).thenThrows(t, ValidationError, { errors: { [field]: Array } }) as ValidationError
  invalid(report('failed_delivery'), 'reason')
  invalid(report('failed_delivery', { reason: 'aliens' }), 'reason')
  invalid(report('not_delivered', { reason: 'rejected' }), 'reason')
  invalid(report('not_delivered'), 'reason')
  invalid(report('received', { reason: 'lost' }), 'reason')
  invalid(report('teleported'), 'status')
  given.when(report('received', { message: 'x'.repeat(150) })).thenMatches(t, [{ data: { message: 'x'.repeat(150) } }], '150 characters is fine')
  const e = invalid(report('received', { message: 'x'.repeat(151), occurred_at: at(-1) }), 'message')
  t.same(Object.keys(e.errors).sort(), ['message', 'occurred_at'], 'both failing fields are named')
  given.when(report('received', { occurred_at: CREATED_AT })).thenMatches(t, [{ data: { occurred_at: CREATED_AT } }], 'exactly at creation is fine')
  invalid(report('received', { occurred_at: 'yesterday' }), 'occurred_at')
  invalid(report('received', { occurred_at: at(60 + 6) }), 'occurred_at') // more than 5 minutes ahead of the clock
  given.when(report('received')).thenMatches(t, [{ data: { occurred_at: at(60) } }], 'occurred_at defaults to the report time')
})

t.test('report carrier status: finals are immutable', async (t) => {
  for (const [status, reason] of [['delivered', null], ['not_delivered', 'lost'], ['returned', null]] as const) {
    const given = spec.given([created, documented, ready, reported(status, reason)])
    given.when(report('out_for_delivery')).thenThrows(t, IllegalStateError, { code: 'shipment_final' })
    given.when(report('delivered', { occurred_at: at(45) })).thenThrows(t, IllegalStateError, { code: 'shipment_final' })
    given.when(report(status, { reason, occurred_at: at(30) })).thenNothingHappened(t, 'the same final report again is a no-op retry')
  }
})

t.test('report carrier status: failed delivery and the return flow', async (t) => {
  const absent = reported('failed_delivery', 'receiver_absent')
  spec.given([created, documented, absent]).when(report('out_for_delivery'))
    .thenMatches(t, [{ type: 'StatusReported', data: { status: 'out_for_delivery', in_return: false } }], 'can go out again')
  spec.given([created, documented, absent]).when(report('delivered'))
    .thenMatches(t, [{ type: 'StatusReported', data: { status: 'delivered', final: true } }], 'can still be delivered')
  for (const reason of ['rejected', 'dangerous_area']) {
    const back = reported('failed_delivery', reason)
    t.ok((back.data as { in_return: boolean }).in_return)
    spec.given([created, documented, back]).when(report('delivered')).thenThrows(t, IllegalStateError, { code: 'shipment_in_return' })
    const out = spec.given([created, documented, back]).when(report('out_for_delivery'))
      .thenMatches(t, [{ type: 'StatusReported', data: { in_return: true } }], 'the return flow stays on')
    spec.given([created, documented, back, ...out]).when(report('delivered', { occurred_at: at(61) }))
      .thenThrows(t, IllegalStateError, { code: 'shipment_in_return' })
    spec.given([created, documented, back]).when(report('returned')).thenMatches(t, [{ type: 'StatusReported', data: { status: 'returned', final: true } }])
  }
})

t.test('report carrier status: annulled shipments refuse reports', async (t) => {
  spec.given([created, documented, cancelled]).when(report('received')).thenThrows(t, IllegalStateError, { code: 'shipment_cancelled' })
  spec.given([]).when(report('received')).thenThrows(t, NotFoundError, { code: 'not_found' })
})

t.test('set tracking', async (t) => {
  const cmd: ShipmentCommand = { type: 'SetTracking', data: { tracking_number: ' TN1 ', tracking_url: null, set_at: at(3) } }
  const events = spec.given([created]).when(cmd).then(t, [{ type: 'TrackingNumberSet', data: { tracking_number: 'TN1', tracking_url: null, set_at: at(3) } }])
  spec.given([created, ...events]).when(cmd).thenNothingHappened(t, 'same number again appends nothing')
  spec.given([created]).when({ type: 'SetTracking', data: { tracking_number: ' ', set_at: at(3) } })
    .thenThrows(t, ValidationError, { errors: { tracking_number: Array } })
  spec.given([created, cancelled]).when(cmd).thenThrows(t, IllegalStateError, { code: 'shipment_cancelled' })
})

t.test('expire', async (t) => {
  const cmd = (hours: number): ShipmentCommand => ({ type: 'ExpireShipment', data: { now: at(hours * 60), expiry_hours: 168 } })
  spec.given([created]).when(cmd(167)).thenNothingHappened(t, 'not yet')
  const expired = spec.given([created]).when(cmd(168)).then(t, [{ type: 'ShipmentExpired', data: { expired_at: at(168 * 60) } }])
  spec.given([created, documented]).when(cmd(200)).thenMatches(t, [{ type: 'ShipmentExpired' }], 'pending preparation expires too')
  spec.given([created, documented, ready]).when(cmd(200)).thenNothingHappened(t, 'ready shipments do not expire')
  spec.given([]).when(cmd(200)).thenNothingHappened(t)
  const s = foldShipment([created, ...expired])
  t.equal(s.routesStatus, 'cancelled')
  t.equal(s.substatus, 'expired')
})

t.test('print label: only the first retrieval is recorded', async (t) => {
  const cmd = (minutes: number): ShipmentCommand => ({ type: 'PrintLabel', data: { printed_at: at(minutes), format: 'pdf', source: 'platform' } })
  const events = spec.given([created]).when(cmd(4)).then(t, [{ type: 'LabelPrinted', data: { printed_at: at(4), format: 'pdf', source: 'platform' } }])
  spec.given([created, ...events]).when(cmd(9)).thenNothingHappened(t)
  t.equal(foldShipment([created, ...events]).labelPrintedAt, at(4))
})

t.test('the caller must be a party: another carrier or organization finds no shipment', async (t) => {
  const hub = 'car_mine'
  const mine: ShipmentEvent = { type: 'ShipmentCreated', data: shipmentCreated({ service_type: { id: 7, code: 'std', name: 'Standard', carrier_hub_id: hub } }) }
  const uploaded: ShipmentEvent = { type: 'LabelUploaded', data: { label, label_zpl: null, waybill: null, documented_at: at(1) } }
  spec.given([mine]).when({ type: 'UploadDocuments', data: { label, documented_at: at(1), carrier_id: 'car_other' } }).thenThrows(t, NotFoundError, { code: 'not_found' })
  spec.given([mine, uploaded]).when({ type: 'ReportCarrierStatus', data: { status: 'received', reported_at: at(60), carrier_id: 'car_other' } }).thenThrows(t, NotFoundError, { code: 'not_found' })
  spec.given([mine]).when({ type: 'SetTracking', data: { tracking_number: 'T', set_at: at(1), carrier_id: 'car_other' } }).thenThrows(t, NotFoundError, { code: 'not_found' })
  spec.given([mine]).when({ type: 'SetTracking', data: { tracking_number: 'T', set_at: at(1), carrier_id: hub } }).thenMatches(t, [{ type: 'TrackingNumberSet' }])
  spec.given([mine]).when({ type: 'CancelShipment', data: { cancelled_at: at(1), organization_id: 'org_stranger' } }).thenThrows(t, NotFoundError, { code: 'not_found' })
  spec.given([mine, uploaded]).when({ type: 'MarkReady', data: { ready_at: at(2), organization_id: 'org_stranger' } }).thenThrows(t, NotFoundError, { code: 'not_found' })
  spec.given([mine, uploaded]).when({ type: 'MarkReady', data: { ready_at: at(2), organization_id: 'org_carrier' } }).thenMatches(t, [{ type: 'ShipmentReady' }])
  spec.given([mine]).when({ type: 'CancelShipment', data: { cancelled_at: at(1), organization_id: 'org_shipper' } }).thenMatches(t, [{ type: 'ShipmentCancelled' }])
})
