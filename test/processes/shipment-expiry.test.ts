import t from 'tap'
import { sql } from 'kysely'
import { openTestDatabase } from '../helpers/test-database.js'
import { down, up } from '../../src/infrastructure/database/migrations/2026-11-22T00-33-notifier-on-the-bus.js'
import { EXPIRE_SHIPMENT_SUBJECT, EXPIRY_SCHEDULER_CONSUMER, expiryTimerId, ShipmentExpiry } from '../../src/processes/shipment-expiry.js'
import { InProcessBus } from '../../src/infrastructure/bus/in-process-bus.js'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { eventMessage } from '../../src/processes/relay.js'
import { Timers } from '../../src/processes/timers.js'
import { build } from '../helpers/build.js'
import { rid, waitFor } from '../infrastructure/bus/bus-contract.js'

// The end-to-end expiry (scheduled at ShipmentCreated, fired, ShipmentExpired, `expired` webhook)
// is in test/notifications/notifier.test.ts on both bus adapters; this is the move off the old table.
t.test('migration 00-33: pending expiry timers of the old table move to the bus timers', async (t) => {
  const database = await openTestDatabase(t)
  const db = database.db
  await down(db) // back to the old tables, as a database migrated before the move
  const fireAt = '2026-11-23T10:00:00.000Z'
  await sql`insert into shipment_expiry_timers (shipment_id, fire_at) values (42, ${fireAt}::timestamptz)`.execute(db)
  await up(db)
  const r = await sql<{ id: string; subject: string; ordering_key: string; data: any; fire_at: Date | string; state: string }>`
    select id, subject, ordering_key, data, fire_at, state from bus_timers`.execute(db)
  t.equal(r.rows.length, 1)
  const row = r.rows[0]!
  t.equal(row.id, expiryTimerId(42))
  t.equal(row.subject, EXPIRE_SHIPMENT_SUBJECT)
  t.equal(row.ordering_key, 'shipment-42')
  t.equal(row.state, 'scheduled')
  t.same(typeof row.data === 'string' ? JSON.parse(row.data) : row.data, { shipment_id: 42, fire_at: fireAt }, 'the message the expire consumer reads')
  t.equal(new Date(row.fire_at).toISOString(), fireAt)
  const gone = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_name in ('shipment_expiry_timers', 'notifier_checkpoints')`.execute(db)
  t.equal(Number(gone.rows[0]!.n), 0, 'the old reader checkpoint and timer tables are dropped')
})

t.test('the scheduler applies a burst of events in their order: created then ready is cancelled, ready then created is scheduled', async (t) => {
  const h = await build(t, { shipmentExpiryHours: 2 })
  const bus = new InProcessBus(h.platform.database, { pollMs: 50 })
  await bus.start()
  t.teardown(() => bus.close({ graceMs: 0 }))
  const timers = new Timers(h.platform.db, bus)
  const expiry = new ShipmentExpiry(h.platform, { bus, timers })
  t.teardown(() => expiry.stop())
  let n = 0
  const event = (type: string, shipmentId: number): RecordedEvent => ({
    id: `ev-${rid()}-${++n}`, streamId: `shipment-${shipmentId}`, streamVersion: n, position: String(n), type,
    data: type === 'ShipmentCreated' ? { created_at: '2026-11-22T10:00:00.000Z' } : {},
    metadata: { actor: { kind: 'system', id: 'test' }, occurred_at: '2026-11-22T10:00:00.000Z' }, schemaVersion: 1, recordedAt: new Date(),
  })
  const [readyInBatch, readyFirst, plain, settledBefore] = [101, 102, 103, 104]
  await bus.publish([event('ShipmentCreated', settledBefore)].map(eventMessage))
  await expiry.start()
  await waitFor('the first timer', async () => (await timers.get(expiryTimerId(settledBefore)))?.state === 'scheduled')
  await bus.publish([
    event('ShipmentCreated', readyInBatch), event('ShipmentReady', readyInBatch),
    event('ShipmentCancelled', readyFirst), event('ShipmentCreated', readyFirst),
    event('ShipmentCreated', plain),
    event('ShipmentExpired', settledBefore),
  ].map(eventMessage))
  await waitFor('all handled', async () => (await bus.consumerStats()).find((c) => c.name === EXPIRY_SCHEDULER_CONSUMER)?.pending === 0)
  t.match(await timers.get(expiryTimerId(readyInBatch)), { state: 'cancelled' }, 'created then ready: cancelled')
  t.match(await timers.get(expiryTimerId(readyFirst)), { state: 'scheduled' }, 'a cancel that overtook its ShipmentCreated leaves it scheduled (a no-op when it fires)')
  const timer = await timers.get(expiryTimerId(plain))
  t.match(timer, { state: 'scheduled', subject: EXPIRE_SHIPMENT_SUBJECT, key: `shipment-${plain}`, data: { shipment_id: plain, fire_at: '2026-11-22T12:00:00.000Z' } })
  t.equal(timer!.fireAt.toISOString(), '2026-11-22T12:00:00.000Z', 'created_at + SHIPMENT_EXPIRY_HOURS')
  t.match(await timers.get(expiryTimerId(settledBefore)), { state: 'cancelled' }, 'expired: cancelled')
})
