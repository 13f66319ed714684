// The behaviour every bus adapter must show (issue 3 §5). Run by in-process-bus.test.ts and
// nats-bus.test.ts with their own factories; not a test file itself.
import { randomBytes, randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import type { Test } from 'tap'
import type { Bus, BusMessage, Delivery, OutgoingMessage } from '../../../src/infrastructure/bus/bus.js'
import { listDeadLetters, replayDeadLetters } from '../../../src/infrastructure/bus/dead-letters.js'
import type { DatabaseHandle } from '../../../src/infrastructure/database/connection.js'
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store.js'
import { idempotent } from '../../../src/processes/idempotent-consumer.js'
import { collectBusMetrics } from '../../../src/processes/metrics.js'
import { exposeBus, parsePrometheus, value } from '../../helpers/prometheus.js'
import { eventOf, Relay } from '../../../src/processes/relay.js'
import { Timers } from '../../../src/processes/timers.js'

export interface ContractEnv {
  adapter: Bus['kind']
  db: DatabaseHandle
  /** The database as a second process sees it: a new connection. */
  otherDb(): Promise<DatabaseHandle>
  /** A new bus instance (a new process, or the same one restarted) over `db`. */
  newBus(db: DatabaseHandle): Promise<Bus>
}

export const rid = (): string => randomBytes(4).toString('hex')

export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const never = () => new Promise<never>(() => {})

/** Rows of test_effects: what idempotent handlers did, one row per effect. */
async function effects(db: DatabaseHandle, consumer: string): Promise<string[]> {
  const r = await sql<{ message_id: string }>`select message_id from test_effects where consumer = ${consumer} order by message_id`.execute(db.db)
  return r.rows.map((x) => x.message_id)
}

/** An idempotent handler whose effect is a test_effects row. */
const recordEffect = (db: DatabaseHandle, seen?: (d: Delivery) => void) => idempotent(db.db, async (d, trx) => {
  seen?.(d)
  await sql`insert into test_effects (consumer, message_id) values (${d.consumer}, ${d.id})`.execute(trx)
})

const metadata = () => ({ actor: { kind: 'system' as const, id: 'contract-test' }, occurred_at: new Date().toISOString() })

export function busContract(t: Test, env: ContractEnv): void {
  const { db } = env
  const buses: Bus[] = []
  const bus = async (handle = db) => {
    const b = await env.newBus(handle)
    buses.push(b)
    return b
  }
  t.before(async () => {
    await sql`create table if not exists test_effects (consumer text not null, message_id text not null)`.execute(db.db)
  })
  t.teardown(async () => {
    for (const b of buses) await b.close({ graceMs: 0 }).catch(() => undefined)
  })

  t.test('publish N, consume N exactly by id across a consumer crash and restart', async (t) => {
    const cat = `crash${rid()}`
    const name = `c_${cat}`
    const ids = Array.from({ length: 40 }, (_, i) => `${cat}-${String(i).padStart(3, '0')}`)
    const first = await bus()
    const result = await first.publish(ids.map((id) => ({ subject: `events.${cat}.Happened`, id, data: { id }, key: `k${Number(id.slice(-3)) % 4}` })))
    t.equal(result.published, ids.length, 'every message stored')
    const again = await first.publish({ subject: `events.${cat}.Happened`, id: ids[0]!, data: { id: ids[0] } })
    t.equal(again.duplicates, 1, 'a repeated id is a duplicate')

    // The first process handles ten messages, then hangs on every later one and "crashes".
    let handled = 0
    const effect = recordEffect(db)
    await first.subscribe({ name, subjects: [`events.${cat}.>`], ackWaitMs: 600, concurrency: 4 }, async (d) => {
      if (handled >= 10) return never()
      handled++
      await effect(d)
    })
    await waitFor('ten handled before the crash', async () => (await effects(db, name)).length >= 10)
    await first.close({ graceMs: 0 })

    const otherDb = await env.otherDb()
    const second = await bus(otherDb)
    const deliveredToSecond: string[] = []
    await second.subscribe({ name, subjects: [`events.${cat}.>`], ackWaitMs: 600, concurrency: 4 }, recordEffect(otherDb, (d) => deliveredToSecond.push(d.id)))
    await waitFor('all handled after the restart', async () => (await effects(db, name)).length >= ids.length)
    await new Promise((r) => setTimeout(r, 300))
    const done = await effects(db, name)
    t.same(done, ids, 'each published id handled, none twice, none missing')
    t.ok(deliveredToSecond.length >= ids.length - 10, 'the restarted consumer took over the unacknowledged messages')
    await waitFor('nothing pending', async () => (await second.consumerStats()).find((s) => s.name === name)?.pending === 0)
  })

  t.test('nak with a delay redelivers no sooner than the delay; a throw uses the retry schedule', async (t) => {
    const cat = `nak${rid()}`
    const b = await bus()
    const seen: { id: string; attempt: number; at: number }[] = []
    let nakReturnedAt = 0
    await b.subscribe({ name: `c_${cat}`, subjects: [`events.${cat}.>`], retryDelaysMs: [250], maxDeliveries: 5 }, async (d) => {
      seen.push({ id: d.id, attempt: d.attempt, at: Date.now() })
      if (d.id === `${cat}-explicit` && d.attempt === 1) {
        d.nak(400)
        nakReturnedAt = Date.now()
      }
      if (d.id === `${cat}-throw` && d.attempt === 1) throw new Error('try again')
    })
    await b.publish([
      { subject: `events.${cat}.A`, id: `${cat}-explicit`, data: {} },
      { subject: `events.${cat}.A`, id: `${cat}-throw`, data: {} },
    ])
    await waitFor('both redelivered', () => seen.filter((s) => s.attempt === 2).length === 2)
    const at = (id: string, attempt: number) => seen.find((s) => s.id === `${cat}-${id}` && s.attempt === attempt)!.at
    const explicitGap = at('explicit', 2) - nakReturnedAt
    const throwGap = at('throw', 2) - at('throw', 1)
    t.ok(explicitGap >= 400, `nak(400) redelivered after ${explicitGap} ms`)
    t.ok(explicitGap < 400 + 3000, 'and not much later')
    t.ok(throwGap >= 250, `a throw redelivered after ${throwGap} ms (retry delay 250)`)
    await new Promise((r) => setTimeout(r, 300))
    t.equal(seen.length, 4, 'acknowledged after the second delivery, no third')
  })

  t.test('max deliveries: dead letter recorded, counted, replayable to that consumer only', async (t) => {
    const cat = `dead${rid()}`
    const name = `c_${cat}`
    const bystander = `b_${cat}`
    const b = await bus()
    let failing = true
    const attempts: number[] = []
    const replayed: Delivery[] = []
    await b.subscribe({ name, subjects: [`events.${cat}.>`], maxDeliveries: 3, retryDelaysMs: [30] }, async (d) => {
      if (!failing) { replayed.push(d); return }
      if (d.id === `${cat}-reject`) { d.deadLetter('not for us'); return }
      attempts.push(d.attempt)
      throw new Error(`boom ${d.attempt}`)
    })
    const bystanderSeen: string[] = []
    await b.subscribe({ name: bystander, subjects: [`events.${cat}.>`] }, (d) => { bystanderSeen.push(d.id) })
    await b.publish([
      { subject: `events.${cat}.Failed`, id: `${cat}-poison`, data: { n: 1 }, key: 'shipment-1' },
      { subject: `events.${cat}.Failed`, id: `${cat}-reject`, data: { n: 2 } },
    ])
    await waitFor('two dead letters', async () => (await listDeadLetters(db.db, { consumer: name })).length === 2)
    const dead = await listDeadLetters(db.db, { consumer: name })
    const poison = dead.find((d) => d.messageId === `${cat}-poison`)!
    t.same(attempts, [1, 2, 3], 'delivered exactly maxDeliveries times')
    t.match(poison, { reason: 'max_deliveries', deliveries: 3, subject: `events.${cat}.Failed`, data: { n: 1 }, key: 'shipment-1' })
    t.match(poison.error, /boom 3/, 'the last error is kept')
    t.match(dead.find((d) => d.messageId === `${cat}-reject`), { reason: 'rejected', error: 'not for us' })

    await waitFor('nothing pending', async () => (await b.consumerStats()).find((s) => s.name === name)?.pending === 0)
    const metrics = await collectBusMetrics(db.db, b)
    const m = metrics.consumers.find((c) => c.name === name)!
    t.match(m, { deadLetters: 2, pending: 0 }, 'metrics count the dead letters')
    t.ok(m.redeliveries >= 2, `metrics count redeliveries (${m.redeliveries})`)
    t.equal(value(parsePrometheus(await exposeBus(metrics)), 'bus_consumer_dead_letters', { consumer: name }), 2, 'exposed to Prometheus')

    failing = false
    t.equal(await replayDeadLetters(db.db, b, { consumer: name }), 2, 'two replayed')
    await waitFor('replays handled', () => replayed.length === 2)
    t.same(replayed.map((d) => d.id).sort(), [`${cat}-poison`, `${cat}-reject`], 'a replay carries the original message id')
    t.same(replayed.map((d) => d.attempt), [1, 1], 'with fresh deliveries')
    t.same(await listDeadLetters(db.db, { consumer: name }), [], 'no open dead letter left')
    await new Promise((r) => setTimeout(r, 200))
    t.same(bystanderSeen.sort(), [`${cat}-poison`, `${cat}-reject`], 'another consumer of the subject does not get the replays')
    const after = (await collectBusMetrics(db.db, b)).consumers.find((c) => c.name === name)!
    t.equal(after.deadLetters, 0)
  })

  t.test('a handler slower than the ack wait keeps its message (no redelivery meanwhile)', async (t) => {
    const cat = `slow${rid()}`
    const b = await bus()
    const attempts: number[] = []
    await b.subscribe({ name: `c_${cat}`, subjects: [`events.${cat}.>`], ackWaitMs: 300 }, async (d) => {
      attempts.push(d.attempt)
      await new Promise((r) => setTimeout(r, 1000))
    })
    await b.publish({ subject: `events.${cat}.Slow`, id: `${cat}-1`, data: {} })
    await waitFor('handled', () => attempts.length >= 1)
    await new Promise((r) => setTimeout(r, 1500))
    t.same(attempts, [1], 'delivered once although the handler took three ack waits')
  })

  t.test('a new consumer can start at new messages; a removed consumer is gone', async (t) => {
    const cat = `new${rid()}`
    const b = await bus()
    await b.publish({ subject: `events.${cat}.E`, id: `${cat}-old`, data: {} })
    const seen: string[] = []
    const all: string[] = []
    await b.subscribe({ name: `new_${cat}`, subjects: [`events.${cat}.>`], startAt: 'new' }, (d) => { seen.push(d.id) })
    await b.subscribe({ name: `all_${cat}`, subjects: [`events.${cat}.>`] }, (d) => { all.push(d.id) })
    await b.publish({ subject: `events.${cat}.E`, id: `${cat}-new`, data: {} })
    await waitFor('both delivered', () => seen.length >= 1 && all.length >= 2)
    await new Promise((r) => setTimeout(r, 200))
    t.same(seen, [`${cat}-new`], 'startAt new skips what was published before')
    t.same(all.sort(), [`${cat}-new`, `${cat}-old`], 'the default starts at the oldest retained message')
    await b.removeConsumer(`new_${cat}`)
    t.notOk((await b.consumerStats()).some((s) => s.name === `new_${cat}`), 'removed')
    t.ok((await b.consumerStats()).some((s) => s.name === `all_${cat}`), 'the other stays')
  })

  t.test('an ordered consumer keeps per-key order through a retry', async (t) => {
    const cat = `ord${rid()}`
    const b = await bus()
    const order = new Map<string, string[]>()
    let failedOnce = false
    await b.subscribe({ name: `c_${cat}`, subjects: [`events.${cat}.>`], ordered: true, retryDelaysMs: [100] }, async (d) => {
      if (d.id === `${cat}-a1` && !failedOnce) { failedOnce = true; throw new Error('first try fails') }
      order.set(d.key!, [...(order.get(d.key!) ?? []), d.id])
    })
    const msgs: OutgoingMessage[] = ['a1', 'b1', 'a2', 'b2', 'a3', 'b3'].map((n) => ({ subject: `events.${cat}.E`, id: `${cat}-${n}`, key: n[0]!, data: {} }))
    await b.publish(msgs)
    await waitFor('all six', () => [...order.values()].flat().length === 6)
    t.same(order.get('a'), [`${cat}-a1`, `${cat}-a2`, `${cat}-a3`], 'key a in order although a1 was retried')
    t.same(order.get('b'), [`${cat}-b1`, `${cat}-b2`, `${cat}-b3`], 'key b in order')
  })

  t.test('relay killed mid-batch and restarted: every event published, none handled twice', async (t) => {
    const cat = `relay${rid()}`
    const store = new PostgresEventStore(db.db)
    const relayName = `relay_${cat}`
    const ids: string[] = []
    for (let s = 0; s < 6; s++) {
      const r = Array.from({ length: 5 }, (_, i) => ({ id: randomUUID(), type: 'Moved', data: { s, i }, metadata: metadata() }))
      await store.append(`${cat}-${s}`, r, 'any')
      ids.push(...r.map((e) => e.id))
    }
    ids.sort()

    const b = await bus()
    const consumer = `c_${cat}`
    let deliveries = 0
    let duplicatesSkipped = 0
    const handler = idempotent(db.db, async (d, trx) => {
      const e = eventOf(d as BusMessage)
      if (!(e.recordedAt instanceof Date) || e.type !== 'Moved' || e.id !== d.id) throw new Error('not a relayed event')
      await sql`insert into test_effects (consumer, message_id) values (${d.consumer}, ${d.id})`.execute(trx)
    }, { onDuplicate: () => { duplicatesSkipped++ } })
    await b.subscribe({ name: consumer, subjects: [`events.${cat}.>`], ordered: true }, (d) => {
      deliveries++
      return handler(d)
    })

    // The first relay publishes our first eight events, then freezes mid-batch (a killed process).
    // Other test files append to the same log meanwhile, so ours may be spread over several batches.
    let published = 0
    let oursPublished = 0
    const freezing: Bus = {
      kind: b.kind,
      async publish(input) {
        const all = Array.isArray(input) ? input : [input]
        let cut = -1
        let ours = oursPublished
        for (let i = 0; i < all.length && cut < 0; i++) {
          if (all[i]!.subject.startsWith(`events.${cat}.`) && ++ours === 8) cut = i + 1
        }
        if (cut < 0) {
          const result = await b.publish(all)
          oursPublished = ours
          return result
        }
        const part = all.slice(0, cut)
        await b.publish(part)
        oursPublished = 8
        published += part.length
        return never()
      },
      subscribe: (o, h) => b.subscribe(o, h),
      consumerStats: () => b.consumerStats(),
      removeConsumer: (n) => b.removeConsumer(n),
      publishHealth: () => b.publishHealth(),
      ping: () => b.ping(),
      close: (o) => b.close(o),
    }
    const killed = new Relay(db.db, store, freezing, { name: relayName, batchSize: 20, pollMs: 50, leaseMs: 1000 })
    killed.start()
    await waitFor('the killed relay published part of the batch', () => published > 0)
    await waitFor('eight of ours handled', async () => (await effects(db, consumer)).length >= 8)
    t.equal((await effects(db, consumer)).length, 8, 'only the part published before the kill was handled')

    const otherDb = await env.otherDb()
    const restarted = new Relay(otherDb.db, new PostgresEventStore(otherDb.db), b, { name: relayName, batchSize: 20, pollMs: 50, leaseMs: 1000 })
    restarted.start()
    t.teardown(() => restarted.stop())
    await waitFor('every event handled', async () => (await effects(db, consumer)).length >= ids.length)
    await new Promise((r) => setTimeout(r, 300))
    t.same(await effects(db, consumer), ids, 'every event of the log handled exactly once')
    t.equal(deliveries, ids.length + duplicatesSkipped, `${deliveries} deliveries for ${ids.length} events`)
    if (env.adapter === 'nats') {
      // Republished after the (test-sized) duplicate window: the copies reach the consumer and are skipped.
      t.equal(duplicatesSkipped, 8, 'the eight republished events were delivered again and skipped by the idempotent consumer')
    } else {
      t.equal(duplicatesSkipped, 0, 'the in-process bus drops republished ids at publish time')
    }
    // The checkpoint moves after the bus acknowledges, a step behind what consumers already saw.
    await waitFor('the relay caught up', async () => (await restarted.status()).lag === 0, 5000)
    const status = await restarted.status()
    t.equal(status.lag, 0, 'the relay caught up')
    t.ok(status.active, 'the restarted relay holds the lease')
    t.notOk((await killed.status()).active, 'the frozen relay lost it')
  })

  t.test('publishHealth: failing from the first failed publish until one succeeds', async (t) => {
    const b = await bus()
    t.same(b.publishHealth(), { failingSince: undefined, error: undefined, lastSuccessAt: undefined }, 'nothing published yet')
    await b.publish({ subject: `events.health${rid()}.Ok`, id: randomUUID(), data: {} })
    const ok = b.publishHealth()
    t.equal(ok.failingSince, undefined)
    t.ok(ok.lastSuccessAt instanceof Date, 'the success is recorded')
    await t.rejects(b.publish({ subject: 'not a subject', id: randomUUID(), data: {} }))
    const failing = b.publishHealth()
    t.ok(failing.failingSince instanceof Date, 'a failed publish starts a failing run')
    t.type(failing.error, 'string')
    await t.rejects(b.publish({ subject: 'still not one', id: randomUUID(), data: {} }))
    t.same(b.publishHealth().failingSince, failing.failingSince, 'the run keeps its start')
    await b.publish({ subject: `events.health${rid()}.Ok`, id: randomUUID(), data: {} })
    t.equal(b.publishHealth().failingSince, undefined, 'a success ends it')
  })

  t.test('a timer survives a process restart; a cancelled one never fires', async (t) => {
    const cat = `timer${rid()}`
    const b1 = await bus()
    const timers1 = new Timers(db.db, b1, { pollMs: 50 })
    timers1.start()
    const fireAt = new Date(Date.now() + 600)
    await timers1.schedule({ id: `expire-${cat}`, fireAt, subject: `commands.${cat}.expire`, data: { shipment: 42 }, key: 'shipment-42' })
    await timers1.schedule({ id: `cancel-${cat}`, fireAt: new Date(Date.now() + 300), subject: `commands.${cat}.expire`, data: { shipment: 43 } })
    t.equal(await timers1.cancel(`cancel-${cat}`), true, 'cancelled while scheduled')
    t.equal(await timers1.cancel(`cancel-${cat}`), false, 'cancelling twice reports it')
    // The process goes away before the timer is due.
    await timers1.stop()
    await b1.close()

    const otherDb = await env.otherDb()
    const b2 = await bus(otherDb)
    const got: { d: Delivery; at: number }[] = []
    await b2.subscribe({ name: `c_${cat}`, subjects: [`commands.${cat}.>`] }, (d) => { got.push({ d, at: Date.now() }) })
    const timers2 = new Timers(otherDb.db, b2, { pollMs: 50 })
    timers2.start()
    t.teardown(() => timers2.stop())
    await waitFor('the timer fired', () => got.length >= 1)
    await new Promise((r) => setTimeout(r, 500))
    t.equal(got.length, 1, 'fired once; the cancelled timer never fired')
    const { d, at } = got[0]!
    t.ok(at >= fireAt.getTime(), 'not before its time')
    t.match(d, { id: `timer:expire-${cat}:1`, subject: `commands.${cat}.expire`, data: { shipment: 42 }, key: 'shipment-42' })
    t.match(await timers2.get(`expire-${cat}`), { state: 'fired', attempts: 1 })
    t.match(await timers2.get(`cancel-${cat}`), { state: 'cancelled' })
  })
}
