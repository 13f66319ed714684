import { sql } from 'kysely'
import t from 'tap'
import { type Delivery, silentLogger } from '../../src/infrastructure/bus/bus.js'
import { resolveConsumerOptions, runHandler } from '../../src/infrastructure/bus/settlement.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { idempotent, pruneProcessedMessages, wasProcessed } from '../../src/processes/idempotent-consumer.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { rid } from '../infrastructure/bus/bus-contract.js'

const db = await openTestDatabase(t)
await sql`create table effects (message_id text not null, note text)`.execute(db.db)

const options = resolveConsumerOptions({ name: 'notifier', subjects: ['events.>'], maxDeliveries: 5, retryDelaysMs: [10] })
const deliver = (id: string, handler: Parameters<typeof runHandler>[3], attempt = 1) =>
  runHandler({ id, subject: 'events.shipment.X', data: {}, key: undefined, headers: {}, publishedAt: new Date() }, attempt, options, handler, silentLogger)
const effectsOf = async (id: string) =>
  (await sql<{ note: string }>`select note from effects where message_id = ${id}`.execute(db.db)).rows.map((r) => r.note)

t.test('a redelivered message has its effect once and is acknowledged', async (t) => {
  const id = `m-${rid()}`
  const duplicates: string[] = []
  const handler = idempotent(db.db, async (d, trx) => {
    await sql`insert into effects (message_id, note) values (${d.id}, ${`attempt ${d.attempt}`})`.execute(trx)
  }, { onDuplicate: (d) => duplicates.push(d.id) })
  t.same(await deliver(id, handler), { kind: 'ack' })
  t.same(await deliver(id, handler, 2), { kind: 'ack' }, 'the copy is acknowledged')
  t.same(await effectsOf(id), ['attempt 1'], 'one effect')
  t.same(duplicates, [id])
  t.ok(await wasProcessed(db.db, 'notifier', id), 'kept under the consumer name')
})

t.test('a failing handler leaves no trace; the retry has the effect', async (t) => {
  const id = `m-${rid()}`
  let calls = 0
  const handler = idempotent(db.db, async (d, trx) => {
    calls++
    await sql`insert into effects (message_id, note) values (${d.id}, 'written')`.execute(trx)
    if (calls === 1) throw new Error('downstream failed')
  })
  t.match(await deliver(id, handler), { kind: 'nak' })
  t.same(await effectsOf(id), [], 'the write of the failed attempt rolled back')
  t.notOk(await wasProcessed(db.db, 'notifier', id), 'not marked processed')
  t.same(await deliver(id, handler, 2), { kind: 'ack' })
  t.same(await effectsOf(id), ['written'])
})

t.test('a handler that asks for a retry or a dead letter is not marked processed', async (t) => {
  const id = `m-${rid()}`
  const handler = idempotent(db.db, async (d: Delivery, trx) => {
    await sql`insert into effects (message_id, note) values (${d.id}, 'partial')`.execute(trx)
    if (d.attempt === 1) d.nak(25)
    else d.deadLetter('gave up')
  })
  t.same(await deliver(id, handler), { kind: 'nak', delayMs: 25 })
  t.same(await deliver(id, handler, 2), { kind: 'dead', reason: 'rejected', error: 'gave up' })
  t.same(await effectsOf(id), [], 'no write kept')
  t.notOk(await wasProcessed(db.db, 'notifier', id))
})

t.test('scopes keep consumers apart; old ids can be pruned', async (t) => {
  const id = `m-${rid()}`
  const write = (scope: string) => idempotent(db.db, async (d, trx) => {
    await sql`insert into effects (message_id, note) values (${d.id}, ${scope})`.execute(trx)
  }, { scope })
  await deliver(id, write('a'))
  await deliver(id, write('b'))
  t.same((await effectsOf(id)).sort(), ['a', 'b'], 'the same message is handled once per scope')
  await sql`update bus_processed_messages set processed_at = now() - interval '40 days' where message_id = ${id}`.execute(db.db)
  t.equal(await pruneProcessedMessages(db.db, 30 * 24 * 3600_000), 2)
  t.notOk(await wasProcessed(db.db, 'a', id))
})

if (db.url) {
  t.test('two processes handling the same message at once: one effect', async (t) => {
    const other = await openDatabase({ url: db.url!, poolSize: 2 })
    t.teardown(() => other.close())
    const id = `m-${rid()}`
    const slow = (handle: typeof db) => idempotent(handle.db, async (d, trx) => {
      await sql`insert into effects (message_id, note) values (${d.id}, 'once')`.execute(trx)
      await new Promise((r) => setTimeout(r, 200))
    })
    const results = await Promise.all([deliver(id, slow(db)), deliver(id, slow(other))])
    t.same(results, [{ kind: 'ack' }, { kind: 'ack' }], 'both acknowledged')
    t.same(await effectsOf(id), ['once'], 'the second waited for the first and skipped')
  })
}
