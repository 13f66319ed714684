import { sql } from 'kysely'
import t from 'tap'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { enqueueNotifications, failPendingDeliveries, recordAttempts, requeue, requeueOf } from '../../src/notifications/outbox.js'
import { listOutbox, outboxPageQuery, type OutboxFilters, type OutboxOwner } from '../../src/notifications/outbox-listing.js'
import { planOrganizationWebhooks } from '../../src/webhooks/enqueue.js'
import { SubscriptionsCache } from '../../src/webhooks/subscriptions-cache.js'
import type { ListingKey } from '../../src/http/listing-seek.js'
import { seekToOffset } from '../../src/http/listing-seek.js'
import { openTestDatabase } from '../helpers/test-database.js'

/**
 * The outbox's delivery logs flat (issue 32): a carrier's notifications and a webhook's deliveries
 * have exact totals from outbox_listing_counts under each filter after inserts and status changes
 * (the counts always equal a recount of the rows), a cursor walk returns each row once in order
 * while rows arrive, page=N equals walking, owners are isolated, and pages are index scans.
 */

const db = await openTestDatabase(t)
const COLUMNS = sql`id, status`
interface Row { id: string; status: string }

let seq = 0
let nextShipment = 5000
const event = (type: string, streamId: string, data: unknown): RecordedEvent => ({
  id: `ev-${++seq}`, streamId, streamVersion: 1, position: String(seq), type, data,
  metadata: { actor: { kind: 'system', id: 'test' }, occurred_at: new Date().toISOString() }, schemaVersion: 1, recordedAt: new Date(),
})
/** A shipment carried by `carrier` and one more event of it: two notifications. */
async function notify(carrier: string) {
  const id = ++nextShipment
  await enqueueNotifications(db.db, [
    event('ShipmentCreated', `shipment-${id}`, { service_type: { carrier_hub_id: carrier }, integration: 'custom', created_at: new Date().toISOString() }),
    event('ShipmentReady', `shipment-${id}`, {}),
  ])
  return id
}
const subscriptions = new SubscriptionsCache()
await subscriptions.of(['org_a'], async () => new Map([['org_a', [{ id: 'wh_a', events: ['route.*'] }, { id: 'wh_b', events: ['route.started'] }]]]))
async function deliver(n: number) {
  const events = Array.from({ length: n }, () => event('RouteStarted', `route-${++nextShipment}`, { organization_id: 'org_a', route_id: nextShipment }))
  const plan = await planOrganizationWebhooks(db.db, events, subscriptions)
  if (plan.statement) plan.ran((await db.db.executeQuery(plan.statement)).rows)
}

const list = (o: OutboxOwner, f: OutboxFilters, perPage: number, page: number, after?: ListingKey) =>
  listOutbox<Row>(db.db, o, f, COLUMNS, perPage, page, after)
const all = async (o: OutboxOwner, f: OutboxFilters = {}) => (await list(o, f, 1000, 1)).rows.map((r) => r.id)
const recount = async () => (await sql<{ k: string }>`
  select target || '/' || owner_id || '/' || status || '/' || day || '=' || n as k from (
    select target, coalesce(carrier_id, webhook_id) as owner_id, status, (created_at at time zone 'UTC')::date::text as day, count(*) as n
    from carrier_notifications group by 1, 2, 3, 4) r order by 1`.execute(db.db)).rows.map((r) => r.k)
const kept = async () => (await sql<{ k: string }>`
  select target || '/' || owner_id || '/' || status || '/' || day::text || '=' || n as k from outbox_listing_counts where n <> 0 order by 1`.execute(db.db)).rows.map((r) => r.k)
const attempt = (id: string, statusCode: number) => ({ id, attempt: 1, roundAttempt: 1, attemptedAt: new Date(), statusCode, latencyMs: 1, error: null, excerpt: null })
const carA: OutboxOwner = { target: 'carrier', carrierId: 'car_a' }
const carB: OutboxOwner = { target: 'carrier', carrierId: 'car_b' }
const whA: OutboxOwner = { target: 'webhook', webhookId: 'wh_a' }

t.test('totals are exact under each filter after inserts and every status change; the counts equal a recount', async (t) => {
  const ships = [await notify('car_a'), await notify('car_a'), await notify('car_a'), await notify('car_b')]
  await deliver(3)
  t.same(await kept(), await recount(), 'after inserts')
  const ids = await all(carA)
  t.equal((await list(carA, {}, 2, 1)).total, 6)
  t.equal((await list(carB, {}, 2, 1)).total, 2)
  t.equal((await list(whA, {}, 2, 1)).total, 3)
  t.equal((await list({ target: 'webhook', webhookId: 'wh_b' }, {}, 2, 1)).total, 3)

  // Two delivered, one failed after the last retry, one retried (pending still).
  await recordAttempts(db.db, [attempt(ids[0]!, 200), attempt(ids[1]!, 200), attempt(ids[2]!, 500), attempt(ids[3]!, 500)], [1000])
  await recordAttempts(db.db, [{ ...attempt(ids[2]!, 500), roundAttempt: 2 }], [1000])
  t.same(await kept(), await recount(), 'after attempts')
  t.equal((await list(carA, { status: 'delivered' }, 2, 1)).total, 2)
  t.equal((await list(carA, { status: 'failed' }, 2, 1)).total, 1)
  t.equal((await list(carA, { status: 'pending' }, 2, 1)).total, 3)
  t.same(await all(carA, { status: 'delivered' }), [ids[0], ids[1]])
  t.ok(await requeue(db.db, 'car_a', ids[2]!), 'failed → pending by hand')
  t.ok(await requeue(db.db, 'car_a', ids[0]!), 'delivered → pending by hand')
  t.notOk(await requeue(db.db, 'car_b', ids[1]!), 'another carrier\'s row is not requeued')
  t.same(await kept(), await recount(), 'after requeues')
  t.equal((await list(carA, { status: 'pending' }, 2, 1)).total, 5)
  t.equal((await list(carA, { status: 'delivered' }, 2, 1)).total, 1)
  t.equal((await list(carA, { shipmentId: ships[0] }, 2, 1)).total, 2, 'a shipment\'s rows: a count through its index')
  t.equal((await list(carA, { shipmentId: ships[0], status: 'pending' }, 2, 1)).total, 2)
  t.equal((await list(carA, { shipmentId: ships[3] }, 2, 1)).total, 0, 'car_b\'s shipment is not car_a\'s')

  const wh = await all(whA)
  await recordAttempts(db.db, [attempt(wh[0]!, 200)], [1000])
  t.ok(await requeueOf(db.db, { webhookId: 'wh_a' }, wh[0]!))
  await recordAttempts(db.db, [attempt(wh[0]!, 200)], [1000])
  await failPendingDeliveries(db.db, 'wh_a')
  t.same(await kept(), await recount(), 'after the webhook\'s deliveries moved and failed')
  t.equal((await list(whA, { status: 'failed' }, 2, 1)).total, 2)
  t.equal((await list(whA, { status: 'delivered' }, 2, 1)).total, 1)
  t.equal((await list(whA, { status: 'pending' }, 2, 1)).total, 0)
})

t.test('the cursor walk returns every row once, newest first, while rows arrive; page=N equals walking; owners are isolated', async (t) => {
  for (let i = 0; i < 3; i++) await notify('car_a')
  for (const f of [{}, { status: 'pending' }]) {
    const expected = await all(carA, f)
    const walked: string[] = []
    let after: ListingKey | undefined
    for (let page = 1; ; page++) {
      const p = await list(carA, f, 3, page, after)
      t.equal(p.total, expected.length + (page - 1) * 2, 'the total counts the rows that arrived')
      walked.push(...p.rows.map((r) => r.id))
      await notify('car_a') // newer than every listed row: neither seen by the walk nor repeated
      if (!p.hasMore) break
      after = p.last
    }
    t.same(walked, expected, `each once, in order ${JSON.stringify(f)}`)
    const now = await all(carA, f)
    for (const perPage of [2, 3]) {
      for (let n = 1; n <= Math.ceil(now.length / perPage) + 1; n++) {
        t.same((await list(carA, f, perPage, n)).rows.map((r) => r.id), now.slice((n - 1) * perPage, n * perPage), `page ${n} of ${perPage}`)
      }
    }
  }
  const mine = new Set(await all(carA))
  t.notOk((await all(carB)).some((id) => mine.has(id)), 'car_b lists none of car_a\'s')
  const page1 = await list(carA, {}, 2, 1)
  t.notOk((await list(carB, {}, 2, 2, page1.last)).rows.some((r) => mine.has(r.id)), 'car_a\'s cursor seeks in car_b\'s rows only')
  t.same(await all({ target: 'carrier', carrierId: 'car_nobody' }), [])
})

t.test('many rows over many days: deep pages seek to their day; index scans without a sort over the table', async (t) => {
  const owner: OutboxOwner = { target: 'carrier', carrierId: 'car_synthetic' }
  // 20,000 rows over 40 days, three statuses, pairs at the same instant (seq breaks the tie).
  await sql`insert into carrier_notifications (id, source_event_id, carrier_id, event, shipment_id, occurred_at, payload, status, created_at)
    select 'syn-' || i, 'syn-ev-' || i, 'car_synthetic', 'ready', 1 + i / 7, now(), '{}', (array['pending', 'delivered', 'failed'])[1 + i % 3],
      timestamptz '2026-01-01T00:00:00Z' + (i / 2) * interval '346 seconds'
    from generate_series(1, 20000) as i`.execute(db.db)
  await sql`insert into outbox_listing_counts (target, owner_id, status, day, n)
    select 'carrier', carrier_id, status, (created_at at time zone 'UTC')::date, count(*) from carrier_notifications
    where carrier_id = 'car_synthetic' group by 2, 3, 4`.execute(db.db)
  await sql`analyze carrier_notifications`.execute(db.db)
  await sql`analyze outbox_listing_counts`.execute(db.db)
  for (const f of [{}, { status: 'failed' }]) {
    const walked: string[] = []
    let after: ListingKey | undefined
    for (;;) {
      const p = await list(owner, f, 500, 1, after)
      walked.push(...p.rows.map((r) => r.id))
      if (!p.hasMore) break
      after = p.last
    }
    const total = (await list(owner, f, 100, 1)).total
    t.equal(total, walked.length, `total ${JSON.stringify(f)}`)
    for (const n of [2, 57, Math.ceil(total / 100)]) {
      t.same((await list(owner, f, 100, n)).rows.map((r) => r.id), walked.slice((n - 1) * 100, n * 100), `page ${n} ${JSON.stringify(f)}`)
    }
  }

  /** Scans of carrier_notifications that are not index scans, or that a Sort reads without a Limit between. */
  const faults = (node: any, sorting = false, out: string[] = []): string[] => {
    const type: string = node['Node Type']
    if (type === 'Seq Scan' || type === 'Bitmap Heap Scan') out.push(`${type} on ${node['Relation Name']}`)
    if (sorting && /Scan/.test(type) && node['Relation Name'] === 'carrier_notifications') out.push(`Sort over ${type}`)
    const next = type === 'Sort' ? true : type === 'Limit' ? false : sorting
    for (const child of node.Plans ?? []) faults(child, next, out)
    return out
  }
  const days = async (f: OutboxFilters) => (await sql<{ day: string; n: string }>`
    select to_char(day, 'YYYY-MM-DD') as day, sum(n) as n from outbox_listing_counts where owner_id = 'car_synthetic'
    ${f.status ? sql`and status = ${f.status}` : sql``} group by day order by day desc`.execute(db.db)).rows.map((d) => ({ day: d.day, n: Number(d.n) }))
  for (const f of [{}, { status: 'failed' }]) {
    const total = (await days(f)).reduce((s, d) => s + d.n, 0)
    // Deep pages well inside the table; on its oldest day alone the planner may sort that day's few rows (bounded by the day).
    for (const offset of [0, Math.floor(total / 2), total - 1000]) {
      const seek = seekToOffset(await days(f), offset)!
      const plan = await sql<{ 'QUERY PLAN': unknown }>`explain (format json) ${outboxPageQuery(owner, f, seek, 21, COLUMNS)}`.execute(db.db)
      const raw = plan.rows[0]!['QUERY PLAN']
      const root = (typeof raw === 'string' ? JSON.parse(raw) : raw)[0].Plan
      t.same(faults(root), [], `index scans, no sort over the table: ${JSON.stringify(f)} at ${offset}`)
    }
  }
})
