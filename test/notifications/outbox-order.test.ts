import { sql } from 'kysely'
import t from 'tap'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { claimDue, enqueueNotifications, recordAttempts } from '../../src/notifications/outbox.js'
import { openTestDatabase } from '../helpers/test-database.js'

const db = await openTestDatabase(t)

let seq = 0
const event = (type: string, shipmentId: number, data: unknown = {}): RecordedEvent => ({
  id: `ev-${++seq}`, streamId: `shipment-${shipmentId}`, streamVersion: 1, position: String(seq), type, data,
  metadata: { actor: { kind: 'system', id: 'test' }, occurred_at: new Date(Date.UTC(2026, 10, 26, 0, 0, seq)).toISOString() },
  schemaVersion: 1, recordedAt: new Date(),
})
const created = (shipmentId: number, carrier: string) =>
  event('ShipmentCreated', shipmentId, { service_type: { carrier_hub_id: carrier }, integration: 'custom', created_at: '2026-11-26T00:00:00.000Z' })
const eventOfRow = async (ids: string[]) => (await sql<{ id: string; event: string; shipment_id: string }>`
  select id, event, shipment_id from carrier_notifications where id = any(${ids}::text[]) order by seq`.execute(db.db)).rows
const claim = async () => (await eventOfRow((await claimDue(db.db, 50, 30_000)).map((d) => d.id))).map((r) => `${r.shipment_id}:${r.event}`)
const attempt = (id: string, statusCode: number) => ({ id, attempt: 1, roundAttempt: 1, attemptedAt: new Date(), statusCode, latencyMs: 1, error: statusCode ? null : 'connect ECONNREFUSED', excerpt: null })
const idOf = async (shipmentId: number, kind: string) => (await sql<{ id: string }>`
  select id from carrier_notifications where shipment_id = ${shipmentId} and event = ${kind}`.execute(db.db)).rows[0]!.id

t.test("one subject's webhooks go one at a time, in order, while the endpoint answers; a failing one holds nothing back", async (t) => {
  await enqueueNotifications(db.db, [created(1, 'car_x'), event('ShipmentReady', 1), event('ShipmentCancelled', 1), created(2, 'car_x'), created(3, 'car_y')])
  t.same(await claim(), ['1:new', '2:new', '3:new'], 'the first of each subject; the later ones of shipment 1 wait for it')
  t.same(await claim(), [], 'in flight: shipment 1\'s next waits until its first is answered')

  await recordAttempts(db.db, [attempt(await idOf(1, 'new'), 204)], [60_000])
  t.same(await claim(), ['1:ready_to_ship'], 'delivered: the next one of its subject goes')

  await recordAttempts(db.db, [attempt(await idOf(1, 'ready_to_ship'), 0)], [60_000])
  t.same(await claim(), ['1:cancelled'], 'refused and waiting for its retry: it holds the later one back no longer')
})

t.test('rows written before subjects existed are claimed as before', async (t) => {
  await sql`insert into carrier_notifications (id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, next_attempt_at)
            values ('ntf_old1', 'old-1', 'car_z', 'new', 9, now(), '{}', now()), ('ntf_old2', 'old-2', 'car_z', 'ready_to_ship', 9, now(), '{}', now())`.execute(db.db)
  t.same(await claim(), ['9:new', '9:ready_to_ship'])
})
