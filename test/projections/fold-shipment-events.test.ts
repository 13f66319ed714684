import t from 'tap'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { addressRow, foldShipmentEvents, packageRows } from '../../projections/shipments/shipments-projection.js'
import { CREATED_AT, shipmentCreated } from '../shipments/fixtures/shipment-created.js'

// The shipments projection's pure part: events in, rows out (no database).

const at = (minutes: number) => new Date(Date.parse(CREATED_AT) + minutes * 60_000).toISOString()
const blob = (key: string) => ({ key, content_type: 'application/pdf', size: 10, sha256: 'x', filename: null })

let position = 0
/** A recorded event of `shipment-42` (or `stream`), as the store returns it. */
function recorded(version: number, type: string, data: unknown, opts: { minutes?: number; actor?: 'organization' | 'carrier' | 'system'; stream?: string } = {}): RecordedEvent {
  position++
  return {
    id: `e${position}`, streamId: opts.stream ?? 'shipment-42', streamVersion: version, position: `1/${position}`, type, data, schemaVersion: 1,
    metadata: { actor: { kind: opts.actor ?? 'organization', id: 'x' }, occurred_at: at(opts.minutes ?? 0) }, recordedAt: new Date(at(opts.minutes ?? 0)),
  }
}

const createdData = shipmentCreated()
const created = recorded(1, 'ShipmentCreated', createdData)
const uploaded = recorded(2, 'LabelUploaded', { label: blob('l.pdf'), label_zpl: null, waybill: blob('w.pdf'), documented_at: at(1) }, { minutes: 1, actor: 'carrier' })
const ready = recorded(3, 'ShipmentReady', { ready_at: at(2) }, { minutes: 2 })
const report = (version: number, minutes: number, status: string, routes: string, extra: Record<string, unknown> = {}) =>
  recorded(version, 'StatusReported', {
    status, reason: null, message: null, occurred_at: at(minutes), reported_at: at(minutes), routes_status: routes, substatus: null,
    in_return: false, final: false, ...extra,
  }, { minutes, actor: 'carrier' })
const received = report(4, 30, 'received', 'picked_up')
const delivered = report(5, 60, 'delivered', 'delivered', { message: 'at the door', final: true })

t.test('a created shipment: its row, addresses, packages and first history entry', async (t) => {
  const { rows, changed, addresses, packages, history } = foldShipmentEvents([created])
  t.same([...changed], [42])
  t.match(rows.get(42), {
    id: 42, control_number: 'K7M2Q', status: 'pending', substatus: 'processing', carrier_phase: 'processing', final_status: null,
    total_packages: 1, total_grams: 1000, total_cm3: 1000, documented_at: null, created_at: CREATED_AT, updated_at: CREATED_AT,
    stream_version: 1, change_seq: 1,
  })
  t.same(addresses, [addressRow(createdData.origin, CREATED_AT), addressRow(createdData.destination, CREATED_AT)])
  t.same(packages, packageRows(createdData))
  t.same(history, [{
    shipment_id: 42, stream_version: 1, event_type: 'ShipmentCreated', status: 'pending', substatus: 'processing',
    carrier_status: null, reason: null, message: null, source: 'routes_api', signed_by: null, occurred_at: CREATED_AT, recorded_at: CREATED_AT,
  }])
  const reused = foldShipmentEvents([recorded(1, 'ShipmentCreated', shipmentCreated({ origin: { ...createdData.origin, created: false } }))])
  t.same(reused.addresses.map((a) => a.id), ['adr_02'], 'an address reused by id is not written again')
  const sr = foldShipmentEvents([recorded(1, 'ShipmentCreated', shipmentCreated({ integration: 'service_routes' }))]).rows.get(42)
  t.match(sr, { carrier_phase: 'pending_preparation', substatus: 'pending_preparation', documented_at: CREATED_AT }, 'a platform label: documented from the start')
})

t.test('the label upload, readiness and the carrier\'s reports move the row and its history', async (t) => {
  const { rows, history } = foldShipmentEvents([created, uploaded, ready, received, delivered])
  t.match(rows.get(42), {
    documents: { label: blob('l.pdf'), label_zpl: null, waybill: blob('w.pdf') }, documented_at: at(1), ready_at: at(2),
    carrier_phase: 'in_carrier_hands', carrier_status: 'delivered', status: 'delivered', substatus: null, final_status: 'delivered',
    shipped_at: at(30), delivered_at: at(60), finished_at: at(60), updated_at: at(60), stream_version: 5, change_seq: 5,
  })
  t.same(history.map((h) => [h.event_type, h.status, h.substatus, h.carrier_status, h.source, h.occurred_at]), [
    ['ShipmentCreated', 'pending', 'processing', null, 'routes_api', CREATED_AT],
    ['LabelUploaded', 'pending', 'pending_preparation', null, 'carrier_api', at(1)],
    ['ShipmentReady', 'pending', 'ready_to_ship', null, 'routes_api', at(2)],
    ['StatusReported', 'picked_up', null, 'received', 'carrier_api', at(30)],
    ['StatusReported', 'delivered', null, 'delivered', 'carrier_api', at(60)],
  ])
  t.equal(history[4]!.message, 'at the door')
  const replaced = recorded(3, 'LabelUploaded', { label: blob('l2.pdf'), label_zpl: null, waybill: null, documented_at: at(5) }, { minutes: 5, actor: 'carrier' })
  const again = foldShipmentEvents([created, uploaded, replaced])
  t.match(again.rows.get(42), { documents: { label: blob('l2.pdf'), waybill: null }, documented_at: at(5), change_seq: 3 })
  t.equal(again.history.length, 2, 'a replacement label is no status change')
})

t.test('cancelled and expired shipments are final, with the reason as the message', async (t) => {
  const cancel = foldShipmentEvents([created, recorded(2, 'ShipmentCancelled', { cancelled_at: at(5), reason: 'wrong address' }, { minutes: 5 })])
  t.match(cancel.rows.get(42), { status: 'cancelled', substatus: null, final_status: 'cancelled', cancelled_at: at(5), finished_at: at(5) })
  t.match(cancel.history[1], { event_type: 'ShipmentCancelled', status: 'cancelled', message: 'wrong address' })
  const expire = foldShipmentEvents([created, recorded(2, 'ShipmentExpired', { expired_at: at(9000) }, { minutes: 9000, actor: 'system' })])
  t.match(expire.rows.get(42), { status: 'cancelled', substatus: 'expired', final_status: 'expired', expired_at: at(9000), finished_at: at(9000) })
  t.match(expire.history[1], { event_type: 'ShipmentExpired', source: 'system' })
})

t.test('tracking, label prints and attachments: which of them give the row a new change_seq', async (t) => {
  const tracking = recorded(2, 'TrackingNumberSet', { tracking_number: 'TN1', tracking_url: 'https://t.example/TN1', set_at: at(3) }, { minutes: 3 })
  const printed = recorded(3, 'LabelPrinted', { printed_at: at(4), format: 'pdf', source: 'platform' }, { minutes: 4 })
  const printedAgain = recorded(4, 'LabelPrinted', { printed_at: at(9), format: 'zpl', source: 'platform' }, { minutes: 9 })
  const attachment = { id: 'att_1', filename: 'invoice.pdf', blob: blob('a.pdf'), description: null, uploaded_by: 'org_shipper', uploaded_at: at(10) }
  const attached = recorded(5, 'AttachmentAdded', attachment, { minutes: 10 })
  const { rows, history, attachments } = foldShipmentEvents([created, tracking, printed, printedAgain, attached])
  t.match(rows.get(42), { tracking_number: 'TN1', tracking_url: 'https://t.example/TN1', label_printed_at: at(4), updated_at: at(4), stream_version: 5, change_seq: 3 },
    'the second print and the attachment change no row')
  t.equal(history.length, 1, 'none of them is a status change')
  t.same(attachments, [{
    id: 'att_1', shipment_id: 42, filename: 'invoice.pdf', content_type: 'application/pdf', size: 10, sha256: 'x', blob_key: 'a.pdf',
    description: null, uploaded_by: 'org_shipper', uploaded_at: at(10),
  }])
})

t.test('existing rows: numbering goes on from the last change_seq; unknown shipments and events are skipped', async (t) => {
  const first = foldShipmentEvents([created, uploaded])
  const next = foldShipmentEvents([ready, recorded(1, 'LabelUploaded', {}, { stream: 'shipment-7' }), recorded(4, 'SomethingNew', {})], first.rows, 10)
  t.same([...next.changed], [42])
  t.match(next.rows.get(42), { carrier_phase: 'ready_to_ship', stream_version: 4, change_seq: 11 })
  t.notOk(next.rows.has(7), 'an event of a shipment never created is skipped, not thrown')
  t.same(next.history.map((h) => h.event_type), ['ShipmentReady'])
})

t.test('the same events give the same rows and numbers whatever the batch boundaries (a rebuild)', async (t) => {
  const log = [created, uploaded, ready, received, delivered]
  const whole = foldShipmentEvents(log)
  for (let cut = 1; cut < log.length; cut++) {
    const a = foldShipmentEvents(log.slice(0, cut))
    const lastSeq = Math.max(...[...a.rows.values()].map((r) => r.change_seq))
    const b = foldShipmentEvents(log.slice(cut), new Map([...a.rows].map(([id, r]) => [id, { ...r }])), lastSeq)
    t.same(b.rows.get(42), whole.rows.get(42), `cut after ${cut}`)
    t.same([...a.history, ...b.history], whole.history)
  }
})

t.test('status catalog customizations, per organization and code, the last one kept', async (t) => {
  const stream = 'shipment-statuses-org_shipper'
  const { catalog, rows } = foldShipmentEvents([
    recorded(1, 'ShipmentStatusCustomized', { organization_id: 'org_shipper', code: 'pending', name: 'Waiting', color: null, customized_at: at(1) }, { stream }),
    recorded(2, 'ShipmentStatusCustomized', { organization_id: 'org_shipper', code: 'pending', name: 'Waiting', color: '#000000', customized_at: at(2) }, { stream }),
    recorded(3, 'ShipmentStatusCustomized', { organization_id: 'org_shipper', code: 'delivered', name: null, color: '#00ff00', customized_at: at(3) }, { stream }),
  ])
  t.same([...catalog.values()], [
    { organization_id: 'org_shipper', code: 'pending', name: 'Waiting', color: '#000000', updated_at: at(2) },
    { organization_id: 'org_shipper', code: 'delivered', name: null, color: '#00ff00', updated_at: at(3) },
  ])
  t.equal(rows.size, 0)
})
