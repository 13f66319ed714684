import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { InProcessBus } from '../../src/infrastructure/bus/in-process-bus.js'
import type { NewEvent } from '../../src/infrastructure/event-store/event-store.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { eventOf, eventSubject, Relay } from '../../src/processes/relay.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { rid, waitFor } from '../infrastructure/bus/bus-contract.js'

const db = await openTestDatabase(t)
const store = new PostgresEventStore(db.db)
const bus = new InProcessBus(db, { pollMs: 50 })
await bus.start()
t.teardown(() => bus.close({ graceMs: 0 }))

const event = (type: string, data: unknown = {}): NewEvent => ({
  type, data, metadata: { actor: { kind: 'system', id: 'relay-test' }, occurred_at: new Date().toISOString() },
})

/** What the relay put on the in-process bus for a category, in publish order. */
async function publishedFor(category: string) {
  const r = await sql<{ message_id: string; subject: string; ordering_key: string }>`
    select message_id, subject, ordering_key from bus_messages where subject like ${`events.${category}.%`} order by seq`.execute(db.db)
  return r.rows
}

t.test('subjects by category and type', async (t) => {
  t.equal(eventSubject({ streamId: 'shipment-42', type: 'ShipmentCreated' }), 'events.shipment.ShipmentCreated')
  t.equal(eventSubject({ streamId: 'task-01H.X', type: 'Task Started' }), 'events.task.Task_Started')
})

t.test('each event published once, keyed by its stream, carrying the recorded event', async (t) => {
  const cat = `rel${rid()}`
  await store.append(`${cat}-1`, [event('Created', { n: 1 }), event('Moved', { n: 2 })], 'no_stream')
  await store.append(`${cat}-2`, [event('Created', { n: 3 })], 'no_stream')
  const got: ReturnType<typeof eventOf>[] = []
  await bus.subscribe({ name: `c_${cat}`, subjects: [`events.${cat}.>`] }, (d) => { got.push(eventOf(d)) })
  const relay = new Relay(db.db, store, bus, { name: `r_${cat}`, pollMs: 50 })
  relay.start()
  t.teardown(() => relay.stop())
  await waitFor('three delivered', () => got.length === 3)
  const stored = (await store.readAll(null, 10_000)).events.filter((e) => e.streamId.startsWith(`${cat}-`))
  const rows = await publishedFor(cat)
  t.same(rows.map((r) => r.message_id), stored.map((e) => e.id), 'message id = event id, in log order, once each')
  t.same(rows.map((r) => r.subject), [`events.${cat}.Created`, `events.${cat}.Moved`, `events.${cat}.Created`])
  t.same(rows.map((r) => r.ordering_key), [`${cat}-1`, `${cat}-1`, `${cat}-2`])
  t.same(got.map((e) => [e.streamId, e.streamVersion, e.type, e.data]).sort(), stored.map((e) => [e.streamId, e.streamVersion, e.type, e.data]).sort())
  t.ok(got.every((e) => e.recordedAt instanceof Date && e.metadata.actor.id === 'relay-test'), 'metadata and dates come through')
})

t.test('one active relay per name; a standby takes over when it stops', async (t) => {
  const cat = `ha${rid()}`
  const name = `r_${cat}`
  // A lease long enough that a starved CI machine does not lose it between renewals.
  const a = new Relay(db.db, store, bus, { name, pollMs: 30, leaseMs: 3000 })
  const b = new Relay(db.db, store, bus, { name, pollMs: 30, leaseMs: 3000 })
  a.start()
  await waitFor('a active', () => a.isActive)
  b.start()
  await store.append(`${cat}-1`, [event('One')], 'no_stream')
  await waitFor('first event relayed', async () => (await publishedFor(cat)).length === 1)
  await new Promise((r) => setTimeout(r, 200))
  t.ok(a.isActive, 'the first relay stays active')
  t.notOk(b.isActive, 'the second waits')
  await a.stop()
  await store.append(`${cat}-2`, [event('Two')], 'no_stream')
  await waitFor('b took over', () => b.isActive, 3000)
  await waitFor('second event relayed', async () => (await publishedFor(cat)).length === 2)
  // The relay publishes first and moves its checkpoint after the bus acknowledges, so the
  // checkpoint may trail the published rows by one write.
  await waitFor('b caught up', async () => (await b.status()).lag === 0, 3000)
  t.equal((await b.status()).lag, 0, 'caught up')
  await b.stop()
  t.equal((await publishedFor(cat)).length, 2, 'nothing published twice')
})

t.test('publishing fails: the checkpoint stays and the batch goes out once the bus is back', async (t) => {
  const cat = `fail${rid()}`
  let down = true
  const flaky = Object.assign(Object.create(bus) as InProcessBus, {
    publish: (m: Parameters<InProcessBus['publish']>[0]) => (down ? Promise.reject(new Error('bus down')) : bus.publish(m)),
  })
  await store.append(`${cat}-1`, [event('A'), event('B')], 'no_stream')
  const relay = new Relay(db.db, store, flaky, { name: `r_${cat}`, pollMs: 30 })
  relay.start()
  t.teardown(() => relay.stop())
  await new Promise((r) => setTimeout(r, 300))
  t.ok((await relay.status()).lag >= 2, 'nothing acknowledged, so the checkpoint did not move')
  down = false
  await waitFor('published after recovery', async () => (await publishedFor(cat)).length === 2)
})

if (db.kind === 'postgres') {
  t.test('an event committed late by a concurrent transaction is not skipped', async (t) => {
    const cat = `late${rid()}`
    const relay = new Relay(db.db, store, bus, { name: `r_${cat}`, pollMs: 30 })
    await relay.step() // take the lease and the checkpoint before the race
    let release!: () => void
    const held = new Promise<void>((r) => { release = r })
    let inside!: () => void
    const appended = new Promise<void>((r) => { inside = r })
    const earlyId = randomUUID()
    const slow = db.db.transaction().execute(async (trx) => {
      await store.appendIn(trx, `${cat}-slow`, [event('Early')], [earlyId], 'no_stream')
      inside()
      await held
    })
    await appended
    await store.append(`${cat}-fast`, [event('Late')], 'no_stream')
    while ((await relay.step()) === 'more') { /* drain */ }
    t.same(await publishedFor(cat), [], 'the later commit waits while the earlier transaction is open')
    release()
    await slow
    while ((await relay.step()) !== 'idle') { /* until caught up */ }
    const rows = await publishedFor(cat)
    t.same(rows.map((r) => r.subject), [`events.${cat}.Early`, `events.${cat}.Late`], 'both published, in commit-safe order')
    t.equal(rows[0]?.message_id, earlyId)
  })
}
