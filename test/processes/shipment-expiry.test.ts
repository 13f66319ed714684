import t from 'tap'
import { sql } from 'kysely'
import { openTestDatabase } from '../helpers/test-database.js'
import { down, up } from '../../src/infrastructure/database/migrations/2026-11-22T00-33-notifier-on-the-bus.js'
import { EXPIRE_SHIPMENT_SUBJECT, expiryTimerId } from '../../src/processes/shipment-expiry.js'

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
