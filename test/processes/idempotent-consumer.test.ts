import { sql } from 'kysely'
import t from 'tap'
import { type Delivery, silentLogger } from '../../src/infrastructure/bus/bus.js'
import { resolveConsumerOptions, runHandler } from '../../src/infrastructure/bus/settlement.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { idempotent, idempotentBatch, idempotentWrites, MAX_BATCH, pruneProcessedMessages, wasProcessed } from '../../src/processes/idempotent-consumer.js'
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
    const slow = (handle: Pick<typeof db, 'db'>) => idempotent(handle.db, async (d, trx) => {
      await sql`insert into effects (message_id, note) values (${d.id}, 'once')`.execute(trx)
      await new Promise((r) => setTimeout(r, 200))
    })
    const results = await Promise.all([deliver(id, slow(db)), deliver(id, slow(other))])
    t.same(results, [{ kind: 'ack' }, { kind: 'ack' }], 'both acknowledged')
    t.same(await effectsOf(id), ['once'], 'the second waited for the first and skipped')
  })
}

// Group commit: deliveries handed out together share a transaction (each handler call below notes
// the transaction it ran in, so the number of distinct ones is the number of transactions).

t.test('deliveries that arrive together are marked and handled in one transaction', async (t) => {
  const ids = Array.from({ length: MAX_BATCH + 6 }, () => `m-${rid()}`)
  const transactions = new Set<unknown>()
  const handler = idempotent(db.db, async (d, trx) => {
    transactions.add(trx)
    await sql`insert into effects (message_id, note) values (${d.id}, 'batched')`.execute(trx)
  })
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  t.ok(results.every((r) => r.kind === 'ack'), 'all acknowledged')
  t.equal(transactions.size, 2, `${MAX_BATCH} in the first transaction, the rest in the next`)
  for (const id of ids) {
    t.same(await effectsOf(id), ['batched'])
    t.ok(await wasProcessed(db.db, 'notifier', id))
  }
})

t.test('a delivery alone takes a transaction of its own at once', async (t) => {
  const transactions = new Set<unknown>()
  const handler = idempotent(db.db, async (d, trx) => {
    transactions.add(trx)
    await sql`insert into effects (message_id, note) values (${d.id}, 'alone')`.execute(trx)
  })
  for (let i = 0; i < 3; i++) t.same(await deliver(`m-${rid()}`, handler), { kind: 'ack' })
  t.equal(transactions.size, 3, 'one transaction per delivery, none waiting for company')
})

t.test('deliveries arriving while a transaction is in flight go together into the next one', async (t) => {
  let release!: () => void
  const gate = new Promise<void>((r) => { release = r })
  let started!: () => void
  const firstStarted = new Promise<void>((r) => { started = r })
  const transactionOf = new Map<string, unknown>()
  const first = `m-${rid()}`
  const handler = idempotent(db.db, async (d, trx) => {
    transactionOf.set(d.id, trx)
    if (d.id === first) { started(); await gate }
    await sql`insert into effects (message_id, note) values (${d.id}, 'ok')`.execute(trx)
  })
  const slow = deliver(first, handler)
  await firstStarted
  const later = Array.from({ length: 5 }, () => `m-${rid()}`)
  const rest = later.map((id) => deliver(id, handler))
  await new Promise((r) => setTimeout(r, 20))
  t.equal(transactionOf.size, 1, 'the later ones wait for the transaction in flight')
  release()
  t.ok([await slow, ...(await Promise.all(rest))].every((r) => r.kind === 'ack'))
  t.equal(new Set(later.map((id) => transactionOf.get(id))).size, 1, 'the queued deliveries shared the next transaction')
  t.not(transactionOf.get(later[0]!), transactionOf.get(first))
  for (const id of [first, ...later]) t.same(await effectsOf(id), ['ok'])
})

t.test('duplicates in a batch are acknowledged without running; a second copy of an id in the same batch too', async (t) => {
  const [done, a, b] = [`m-${rid()}`, `m-${rid()}`, `m-${rid()}`]
  const duplicates: string[] = []
  let runs = 0
  const handler = idempotent(db.db, async (d, trx) => {
    runs++
    await sql`insert into effects (message_id, note) values (${d.id}, 'once')`.execute(trx)
  }, { onDuplicate: (d) => duplicates.push(d.id) })
  await deliver(done, handler)
  runs = 0
  const results = await Promise.all([done, a, b, a].map((id) => deliver(id, handler)))
  t.same(results, [{ kind: 'ack' }, { kind: 'ack' }, { kind: 'ack' }, { kind: 'ack' }])
  t.equal(runs, 2, 'only the new ids ran')
  t.same(duplicates.sort(), [done, a].sort(), 'the processed one and the copy were skipped')
  for (const id of [done, a, b]) t.same(await effectsOf(id), ['once'])
})

t.test('a handler that throws in a batch: only its delivery fails; the others are handled once', async (t) => {
  const ids = Array.from({ length: 6 }, () => `m-${rid()}`)
  const bad = ids[2]!
  const runs = new Map<string, number>()
  const handler = idempotent(db.db, async (d, trx) => {
    runs.set(d.id, (runs.get(d.id) ?? 0) + 1)
    await sql`insert into effects (message_id, note) values (${d.id}, 'written')`.execute(trx)
    // A failed statement aborts the whole transaction, whichever handler issued it.
    if (d.id === bad) await sql`select * from no_such_table`.execute(trx)
  })
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  ids.forEach((id, i) => t.equal(results[i]!.kind, id === bad ? 'nak' : 'ack', `delivery ${i}`))
  t.match(results[2], { kind: 'nak', delayMs: 10, error: /no_such_table/ })
  for (const id of ids) {
    t.same(await effectsOf(id), id === bad ? [] : ['written'], 'one effect each, none for the bad one')
    t.equal(await wasProcessed(db.db, 'notifier', id), id !== bad)
  }
  t.equal(runs.get(ids[5]!), 1, 'the ones after it ran alone only')
  t.equal(runs.get(ids[0]!), 2, 'the ones before it ran again alone (the batch rolled back)')
  t.same(await deliver(bad, idempotent(db.db, async (d, trx) => {
    await sql`insert into effects (message_id, note) values (${d.id}, 'retried')`.execute(trx)
  }), 2), { kind: 'ack' })
  t.same(await effectsOf(bad), ['retried'], 'its retry has the effect')
})

t.test('a handler that asks for a retry or a dead letter in a batch: its writes roll back, the others keep theirs', async (t) => {
  const ids = Array.from({ length: 6 }, () => `m-${rid()}`)
  const [retry, dead] = [ids[1]!, ids[4]!]
  const transactions = new Set<unknown>()
  const handler = idempotent(db.db, async (d: Delivery, trx) => {
    transactions.add(trx)
    await sql`insert into effects (message_id, note) values (${d.id}, ${d.id === retry || d.id === dead ? 'partial' : 'kept'})`.execute(trx)
    if (d.id === retry) d.nak(25)
    if (d.id === dead) d.deadLetter('gave up')
  })
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  t.same(results[1], { kind: 'nak', delayMs: 25 })
  t.same(results[4], { kind: 'dead', reason: 'rejected', error: 'gave up' })
  t.ok([0, 2, 3, 5].every((i) => results[i]!.kind === 'ack'), 'the others acknowledged')
  for (const id of ids) {
    const refused = id === retry || id === dead
    t.same(await effectsOf(id), refused ? [] : ['kept'])
    t.equal(await wasProcessed(db.db, 'notifier', id), !refused)
  }
  t.equal(transactions.size, 3, 'each refusal rolled its batch back; the rest went again together')
})

if (db.url) {
  t.test('two processes handling overlapping batches at once: one effect per message', async (t) => {
    const other = await openDatabase({ url: db.url!, poolSize: 2 })
    t.teardown(() => other.close())
    const ids = Array.from({ length: 12 }, () => `m-${rid()}`)
    const slow = (handle: Pick<typeof db, 'db'>) => idempotent(handle.db, async (d, trx) => {
      await sql`insert into effects (message_id, note) values (${d.id}, 'once')`.execute(trx)
      await new Promise((r) => setTimeout(r, 5))
    })
    const [a, b] = [slow(db), slow(other)]
    const results = await Promise.all([...ids.map((id) => deliver(id, a)), ...[...ids].reverse().map((id) => deliver(id, b))])
    t.ok(results.every((r) => r.kind === 'ack'), 'all acknowledged')
    for (const id of ids) t.same(await effectsOf(id), ['once'])
  })
}

// The batch form: one handler call per transaction, with that transaction's new deliveries.

/** A batch handler writing its deliveries' effects with one statement, noting each call. */
const batchWriter = (calls: string[][], refuse: (d: Delivery) => boolean = () => false) =>
  idempotentBatch(db.db, async (deliveries: Delivery[], trx) => {
    calls.push(deliveries.map((d) => d.id))
    const kept = deliveries.filter((d) => !refuse(d))
    for (const d of deliveries) if (refuse(d)) d.id.endsWith('-dead') ? d.deadLetter('gave up') : d.nak(25)
    if (kept.length > 0) {
      await sql`insert into effects (message_id, note) select id, 'batch' from unnest(${kept.map((d) => d.id)}::text[]) as u(id)`.execute(trx)
    }
  })

t.test('batch form: deliveries that arrive together reach the handler together, in arrival order, without duplicates', async (t) => {
  const calls: string[][] = []
  const duplicates: string[] = []
  const done = `m-${rid()}`
  const handler = idempotentBatch(db.db, async (deliveries: Delivery[], trx) => {
    calls.push(deliveries.map((d) => d.id))
    await sql`insert into effects (message_id, note) select id, 'batch' from unnest(${deliveries.map((d) => d.id)}::text[]) as u(id)`.execute(trx)
  }, { onDuplicate: (d) => duplicates.push(d.id) })
  t.same(await deliver(done, handler), { kind: 'ack' })
  t.same(calls, [[done]], 'a delivery alone is a batch of one')
  calls.length = 0
  const ids = Array.from({ length: 5 }, () => `m-${rid()}`)
  const results = await Promise.all([ids[0]!, done, ...ids.slice(1), ids[2]!].map((id) => deliver(id, handler)))
  t.ok(results.every((r) => r.kind === 'ack'), 'all acknowledged')
  t.same(calls, [ids], 'one call, in arrival order')
  t.same(duplicates.sort(), [done, ids[2]!].sort(), 'the processed one and the second copy are skipped')
  for (const id of [done, ...ids]) {
    t.same(await effectsOf(id), ['batch'])
    t.ok(await wasProcessed(db.db, 'notifier', id))
  }
})

t.test('batch form: a refused delivery keeps no mark and costs the others no rollback', async (t) => {
  const ids = [`m-${rid()}`, `m-${rid()}`, `m-${rid()}-nak`, `m-${rid()}`, `m-${rid()}-dead`, `m-${rid()}`]
  const calls: string[][] = []
  const handler = batchWriter(calls, (d) => d.id.endsWith('-nak') || d.id.endsWith('-dead'))
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  t.same(results[2], { kind: 'nak', delayMs: 25 })
  t.same(results[4], { kind: 'dead', reason: 'rejected', error: 'gave up' })
  t.ok([0, 1, 3, 5].every((i) => results[i]!.kind === 'ack'))
  t.same(calls, [ids], 'one run of the batch, no second one')
  for (const id of ids) {
    const refused = id.endsWith('-nak') || id.endsWith('-dead')
    t.same(await effectsOf(id), refused ? [] : ['batch'])
    t.equal(await wasProcessed(db.db, 'notifier', id), !refused, `${id} marked only if handled`)
  }
  calls.length = 0
  t.same(await deliver(ids[2]!, batchWriter(calls), 2), { kind: 'ack' }, 'the redelivery is handled')
  t.same(calls, [[ids[2]]], 'alone')
  t.same(await effectsOf(ids[2]!), ['batch'])
})

t.test('batch form: a batch that fails goes again one delivery at a time; only the bad one fails', async (t) => {
  const ids = Array.from({ length: 5 }, () => `m-${rid()}`)
  const bad = ids[3]!
  const calls: string[][] = []
  const handler = idempotentBatch(db.db, async (deliveries: Delivery[], trx) => {
    calls.push(deliveries.map((d) => d.id))
    await sql`insert into effects (message_id, note) select id, 'written' from unnest(${deliveries.map((d) => d.id)}::text[]) as u(id)`.execute(trx)
    if (deliveries.some((d) => d.id === bad)) await sql`select * from no_such_table`.execute(trx)
  })
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  ids.forEach((id, i) => t.equal(results[i]!.kind, id === bad ? 'nak' : 'ack', `delivery ${i}`))
  t.same(calls[0], ids, 'tried together first')
  t.same(calls.slice(1).map((c) => c.length), [1, 1, 1, 1, 1], 'then each alone')
  for (const id of ids) {
    t.same(await effectsOf(id), id === bad ? [] : ['written'])
    t.equal(await wasProcessed(db.db, 'notifier', id), id !== bad)
  }
})

// idempotentWrites(): with sendStatements the marks and the writes go in one round trip; without
// (a handle that has none) in a transaction. The same behaviour either way.
const writesMode = db.sendStatements ? 'one round trip' : 'a transaction'
const counting = (sent: string[]) => (db.sendStatements ? async (text: string) => { sent.push(text); return db.sendStatements!(text) } : undefined)
const noteWrites = (deliveries: Delivery[], note: string) =>
  sql`insert into effects (message_id, note) select id, ${note} from unnest(${deliveries.map((d) => d.id)}::text[]) as u(id) returning message_id`.compile(db.db)

t.test(`writes form, in ${writesMode}: marks and writes once, skips what was processed, reports the rows`, async (t) => {
  const sent: string[] = []
  const calls: string[][] = []
  const reported: string[] = []
  const duplicates: string[] = []
  const handler = idempotentWrites(db.db, counting(sent), async (deliveries: Delivery[]) => {
    calls.push(deliveries.map((d) => d.id))
    return { statements: [noteWrites(deliveries, 'planned')], ran: (rows) => { for (const r of rows[0] as { message_id: string }[]) reported.push(r.message_id) } }
  }, { onDuplicate: (d) => duplicates.push(d.id) })
  const done = `m-${rid()}`
  t.same(await deliver(done, handler), { kind: 'ack' })
  const ids = Array.from({ length: 4 }, () => `m-${rid()}`)
  const results = await Promise.all([ids[0]!, done, ...ids.slice(1)].map((id) => deliver(id, handler)))
  t.ok(results.every((r) => r.kind === 'ack'), 'all acknowledged')
  if (db.sendStatements) {
    // One trip: no look for processed ids before planning; the marks' guard finds the processed
    // one, the string rolls back, and each goes alone (the processed one skipped before its plan).
    t.same(calls.slice(0, 2), [[done], [ids[0]!, done, ...ids.slice(1)]], 'planned alone, then all together')
    t.same(calls.slice(2).map((c) => c.length), [1, 1, 1, 1], 'then one by one')
    t.same(calls.slice(2).flat().sort(), [...ids].sort(), 'all but the processed one')
  } else t.same(calls, [[done], ids], 'planned alone, then together without the processed one')
  t.same(duplicates, [done])
  t.same(reported.sort(), [done, ...ids].sort(), 'ran() got the rows of each write')
  for (const id of [done, ...ids]) {
    t.same(await effectsOf(id), ['planned'], `${id}: one effect`)
    t.ok(await wasProcessed(db.db, 'notifier', id), `${id}: marked`)
  }
  if (db.sendStatements) t.equal(sent.length, 2, 'one string of statements per batch, the batch of one included (the one-by-one path uses transactions)')
})

t.test(`writes form, in ${writesMode}: a refused delivery is neither marked nor written`, async (t) => {
  const ids = [`m-${rid()}`, `m-${rid()}-nak`, `m-${rid()}`]
  const handler = idempotentWrites(db.db, counting([]), async (deliveries: Delivery[]) => {
    for (const d of deliveries) if (d.id.endsWith('-nak')) d.nak(25)
    return { statements: [noteWrites(deliveries.filter((d) => !d.id.endsWith('-nak')), 'kept')] }
  })
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  t.same(results.map((r) => r.kind), ['ack', 'nak', 'ack'])
  for (const id of ids) {
    const refused = id.endsWith('-nak')
    t.same(await effectsOf(id), refused ? [] : ['kept'])
    t.equal(await wasProcessed(db.db, 'notifier', id), !refused)
  }
})

// The window between the plan and the marks exists in one-trip mode only (the transaction path marks first).
if (db.sendStatements) t.test(`writes form, in ${writesMode}: a message another consumer marks meanwhile has one effect`, async (t) => {
  const ids = [`m-${rid()}`, `m-${rid()}`, `m-${rid()}`]
  const raced = ids[1]!
  const duplicates: string[] = []
  let planned = 0
  const handler = idempotentWrites(db.db, counting([]), async (deliveries: Delivery[], reader) => {
    planned++
    // Between the plan and the marks, another process handles one of them.
    if (planned === 1) {
      await sql`insert into bus_processed_messages (consumer, message_id) values ('notifier', ${raced})`.execute(db.db)
      await sql`insert into effects (message_id, note) values (${raced}, 'other process')`.execute(db.db)
    }
    await sql`select 1`.execute(reader)
    return { statements: [noteWrites(deliveries, 'mine')] }
  }, { onDuplicate: (d) => duplicates.push(d.id) })
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  t.ok(results.every((r) => r.kind === 'ack'), 'all acknowledged')
  t.same(await effectsOf(raced), ['other process'], 'the raced message keeps the other process\'s effect only')
  t.same(duplicates, [raced], 'and is seen as a duplicate')
  for (const id of [ids[0]!, ids[2]!]) t.same(await effectsOf(id), ['mine'], `${id} handled once`)
})

t.test(`writes form, in ${writesMode}: a write that fails on the server sends the batch one by one`, async (t) => {
  const ids = Array.from({ length: 3 }, () => `m-${rid()}`)
  const bad = ids[1]!
  const handler = idempotentWrites(db.db, counting([]), async (deliveries: Delivery[]) => ({
    statements: [
      noteWrites(deliveries, 'written'),
      ...(deliveries.some((d) => d.id === bad) ? [sql`select ${'bad message'}::int`.compile(db.db)] : []),
    ],
  }))
  const results = await Promise.all(ids.map((id) => deliver(id, handler)))
  ids.forEach((id, i) => t.equal(results[i]!.kind, id === bad ? 'nak' : 'ack', `delivery ${i}`))
  for (const id of ids) {
    t.same(await effectsOf(id), id === bad ? [] : ['written'])
    t.equal(await wasProcessed(db.db, 'notifier', id), id !== bad)
  }
})
