import { sql } from 'kysely'
import t from 'tap'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { enqueueNotification, enqueueNotifications, type EnqueueOutcome } from '../../src/notifications/outbox.js'
import { openTestDatabase } from '../helpers/test-database.js'

const db = await openTestDatabase(t)

let seq = 0
let nextShipment = 1000
const event = (type: string, shipmentId: number, data: unknown = {}): RecordedEvent => ({
  id: `ev-${++seq}`, streamId: `shipment-${shipmentId}`, streamVersion: 1, position: String(seq), type, data,
  metadata: { actor: { kind: 'system', id: 'test' }, occurred_at: new Date(Date.UTC(2026, 10, 22, 0, 0, seq)).toISOString() },
  schemaVersion: 1, recordedAt: new Date(),
})
const created = (shipmentId: number, carrier: string, integration = 'custom') =>
  event('ShipmentCreated', shipmentId, { service_type: { carrier_hub_id: carrier }, integration, created_at: '2026-11-22T00:00:00.000Z' })

/**
 * Events covering every outcome, on fresh shipments: a shipment created earlier (`stored`), one
 * stored with another carrier than its republished ShipmentCreated says, and a batch with a
 * later event before its ShipmentCreated, a service_routes carrier, a copy, an unknown shipment.
 */
async function scenario(): Promise<RecordedEvent[]> {
  const [a, b, c, stored, moved, unknown] = Array.from({ length: 6 }, () => ++nextShipment)
  await enqueueNotification(db.db, created(stored!, 'car_stored'))
  await enqueueNotification(db.db, created(moved!, 'car_first'))
  const createdA = created(a!, 'car_a')
  return [
    createdA, event('ShipmentReady', a!),
    event('ShipmentCancelled', b!), created(b!, 'car_b'), event('ShipmentReady', b!),
    created(c!, 'car_c', 'service_routes'), event('ShipmentReady', c!),
    event('ShipmentReady', stored!),
    created(moved!, 'car_second'), event('ShipmentCancelled', moved!),
    createdA,
    event('LabelUploaded', a!),
    event('ShipmentExpired', unknown!),
    { ...event('ShipmentReady', a!), streamId: 'order-1' },
  ]
}

const rowsOf = async (events: RecordedEvent[]) => (await sql<{ source_event_id: string; carrier_id: string; event: string; shipment_id: string }>`
  select source_event_id, carrier_id, event, shipment_id from carrier_notifications where source_event_id = any(${events.map((e) => e.id)}::text[]) order by seq`.execute(db.db)).rows

t.test('a batch of events has the outcomes and rows of the same events enqueued one by one, with two statements', async (t) => {
  const one = await scenario()
  const oneByOne: EnqueueOutcome[] = []
  for (const e of one) oneByOne.push(await enqueueNotification(db.db, e))
  t.same(oneByOne, [
    'created', 'created',
    'unknown_shipment', 'created', 'created',
    'none', 'none',
    'created',
    'created', 'created',
    'duplicate',
    'none', 'unknown_shipment', 'none',
  ], 'the reference: one by one')

  const batch = await scenario()
  let statements = 0
  const counted = db.db.withPlugin({ transformQuery: (a) => { statements++; return a.node }, transformResult: async (a) => a.result })
  const outcomes = await counted.transaction().execute((trx) => enqueueNotifications(trx, batch))
  t.same(outcomes, oneByOne, 'the same outcomes at once')
  t.equal(statements, 2, 'one look-up, one insert')

  // The same rows, in the same order, event for event (the two scenarios differ only in ids).
  const pick = (events: RecordedEvent[]) => async () => (await rowsOf(events)).map((r) => {
    const i = events.findIndex((e) => e.id === r.source_event_id)
    return { i, carrier: r.carrier_id, event: r.event }
  })
  const expected = await pick(one)()
  t.same(await pick(batch)(), expected)
  t.same(expected.map((r) => [r.i, r.carrier, r.event]), [
    [0, 'car_a', 'new'], [1, 'car_a', 'ready_to_ship'],
    [3, 'car_b', 'new'], [4, 'car_b', 'ready_to_ship'],
    [7, 'car_stored', 'ready_to_ship'],
    [8, 'car_second', 'new'], [9, 'car_first', 'cancelled'],
  ], 'a republished ShipmentCreated notifies its own carrier; the later events the one stored first')
})

t.test('only ShipmentCreated events: one statement; again: all duplicates, nothing new', async (t) => {
  const events = Array.from({ length: 5 }, () => created(++nextShipment, 'car_x'))
  let statements = 0
  const counted = db.db.withPlugin({ transformQuery: (a) => { statements++; return a.node }, transformResult: async (a) => a.result })
  t.same(await enqueueNotifications(counted, events), events.map(() => 'created'))
  t.equal(statements, 1, 'notifier_shipments and carrier_notifications in one statement')
  t.same(await enqueueNotifications(db.db, events), events.map(() => 'duplicate'))
  t.equal((await rowsOf(events)).length, 5)
  const stored = await sql<{ n: number }>`select count(*)::int as n from notifier_shipments where shipment_id = any(${events.map((e) => Number(e.streamId.slice(9)))}::bigint[])`.execute(db.db)
  t.equal(Number(stored.rows[0]!.n), 5, 'every shipment remembered')
  t.same(await enqueueNotifications(db.db, []), [], 'nothing to do')
})
