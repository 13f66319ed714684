import { sql } from 'kysely'
import t from 'tap'
import type { Bus, Delivery } from '../../src/infrastructure/bus/bus.js'
import { InProcessBus } from '../../src/infrastructure/bus/in-process-bus.js'
import { timerMessageId, Timers } from '../../src/processes/timers.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { rid, waitFor } from '../infrastructure/bus/bus-contract.js'

const db = await openTestDatabase(t)
const bus = new InProcessBus(db, { pollMs: 50 })
await bus.start()
t.teardown(() => bus.close({ graceMs: 0 }))

async function collect(cat: string): Promise<Delivery[]> {
  const got: Delivery[] = []
  await bus.subscribe({ name: `c_${cat}`, subjects: [`commands.${cat}.>`] }, (d) => { got.push(d) })
  return got
}

t.test('rescheduling moves a timer; the new firing is a new message', async (t) => {
  const cat = `move${rid()}`
  const got = await collect(cat)
  const timers = new Timers(db.db, bus, { pollMs: 30 })
  timers.start()
  t.teardown(() => timers.stop())
  // Moved earlier, not later: a slow machine cannot let the first time pass before the move lands.
  const firstAt = new Date(Date.now() + 60_000)
  await timers.schedule({ id: `t-${cat}`, fireAt: firstAt, subject: `commands.${cat}.ping`, data: { v: 1 } })
  const movedAt = new Date(Date.now() + 300)
  await timers.schedule({ id: `t-${cat}`, fireAt: movedAt, subject: `commands.${cat}.ping`, data: { v: 2 } })
  await waitFor('fired', () => got.length === 1)
  const firedAt = Date.now()
  t.ok(firedAt >= movedAt.getTime() && firedAt < firstAt.getTime(), 'fired at the new time, not the old one')
  t.match(got[0], { id: timerMessageId(`t-${cat}`, 2), data: { v: 2 } })
  t.match(got[0]!.headers, { 'Bus-Timer-Id': `t-${cat}`, 'Bus-Fire-At': movedAt.toISOString() })
  await timers.schedule({ id: `t-${cat}`, fireAt: new Date(), subject: `commands.${cat}.ping`, data: { v: 3 } })
  await waitFor('fired again after rescheduling a fired timer', () => got.length === 2)
  t.equal(got[1]!.id, timerMessageId(`t-${cat}`, 3))
})

t.test('two firing processes fire each due timer once', async (t) => {
  const cat = `pair${rid()}`
  const got = await collect(cat)
  for (let i = 0; i < 30; i++) {
    await new Timers(db.db, bus).schedule({ id: `p-${cat}-${i}`, fireAt: new Date(Date.now() - 1000), subject: `commands.${cat}.go`, data: { i } })
  }
  const a = new Timers(db.db, bus, { pollMs: 20, batchSize: 4 })
  const b = new Timers(db.db, bus, { pollMs: 20, batchSize: 4 })
  a.start()
  b.start()
  t.teardown(async () => { await a.stop(); await b.stop() })
  await waitFor('thirty fired', () => got.length >= 30)
  await new Promise((r) => setTimeout(r, 200))
  t.equal(got.length, 30)
  t.equal(new Set(got.map((d) => d.id)).size, 30, 'no timer fired twice')
  const r = await sql<{ attempts: number }>`select attempts from bus_timers where id like ${`p-${cat}-%`}`.execute(db.db)
  t.ok(r.rows.every((x) => x.attempts === 1), 'each claimed by one process only')
})

t.test('a firing process that dies after publishing: fired again under the same message id', async (t) => {
  const cat = `die${rid()}`
  const got = await collect(cat)
  const dying = Object.assign(Object.create(bus) as Bus, {
    publish: async (m: Parameters<Bus['publish']>[0]) => { await bus.publish(m); return new Promise<never>(() => {}) },
  })
  const first = new Timers(db.db, dying, { pollMs: 20, leaseMs: 300 })
  await first.schedule({ id: `d-${cat}`, fireAt: new Date(), subject: `commands.${cat}.expire`, data: {} })
  void first.fireDue()
  await waitFor('published by the dying process', () => got.length === 1)
  const second = new Timers(db.db, bus, { pollMs: 20, leaseMs: 300 })
  second.start()
  t.teardown(() => second.stop())
  await waitFor('marked fired by the second process', async () => (await second.get(`d-${cat}`))?.state === 'fired', 5000)
  t.match(await second.get(`d-${cat}`), { state: 'fired', attempts: 2 }, 'fired twice')
  await new Promise((r) => setTimeout(r, 200))
  t.equal(got.length, 1, 'the bus dropped the second copy (same message id)')
})

t.test('scheduled in a caller transaction: gone if that transaction rolls back', async (t) => {
  const cat = `trx${rid()}`
  const timers = new Timers(db.db, bus)
  await db.db.transaction().execute(async (trx) => {
    await timers.schedule({ id: `kept-${cat}`, fireAt: new Date(Date.now() + 60_000), subject: `commands.${cat}.x`, data: {} }, trx)
  })
  await db.db.transaction().execute(async (trx) => {
    await timers.schedule({ id: `lost-${cat}`, fireAt: new Date(Date.now() + 60_000), subject: `commands.${cat}.x`, data: {} }, trx)
    throw new Error('command failed')
  }).catch(() => undefined)
  t.match(await timers.get(`kept-${cat}`), { state: 'scheduled' })
  t.equal(await timers.get(`lost-${cat}`), undefined)
  t.ok((await timers.status()).scheduled >= 1)
  t.equal(await timers.cancel(`kept-${cat}`), true)
  await t.rejects(timers.schedule({ id: 'bad', fireAt: new Date(), subject: 'orders.x', data: {} }), /must start with/)
})

t.test('change(): schedules and cancels in order, in one statement', async (t) => {
  const cat = `chg${rid()}`
  const timers = new Timers(db.db, bus)
  const base = Date.now() + 60_000
  const spec = (name: string, v: number) => ({ id: `${name}-${cat}`, fireAt: new Date(base + v), subject: `commands.${cat}.x`, data: { v } })
  await timers.schedule(spec('was-scheduled', 0))
  await timers.schedule(spec('moved', 0))
  let statements = 0
  await db.db.transaction().execute(async (trx) => {
    const run = trx.executeQuery.bind(trx)
    trx.executeQuery = ((q: Parameters<typeof run>[0]) => { statements++; return run(q) }) as typeof trx.executeQuery
    await timers.change([
      { schedule: spec('then-cancelled', 1) }, { cancel: `then-cancelled-${cat}` },
      { cancel: `then-scheduled-${cat}` }, { schedule: spec('then-scheduled', 2) },
      { cancel: `was-scheduled-${cat}` },
      { schedule: spec('moved', 3) }, { schedule: spec('moved', 4) },
      { cancel: `never-scheduled-${cat}` },
    ], trx)
  })
  t.equal(statements, 1, 'one statement for the whole change')
  t.match(await timers.get(`then-cancelled-${cat}`), { state: 'cancelled', data: { v: 1 } }, 'scheduled then cancelled: cancelled')
  t.match(await timers.get(`then-scheduled-${cat}`), { state: 'scheduled', data: { v: 2 }, generation: 1 }, 'cancelled then scheduled: scheduled')
  t.match(await timers.get(`was-scheduled-${cat}`), { state: 'cancelled' })
  const moved = await timers.get(`moved-${cat}`)
  t.match(moved, { state: 'scheduled', data: { v: 4 }, generation: 2 }, 'the last schedule wins; a new generation')
  t.equal(moved!.fireAt.toISOString(), spec('moved', 4).fireAt.toISOString())
  t.equal(await timers.get(`never-scheduled-${cat}`), undefined, 'a cancel of an unknown timer creates nothing')
  await timers.change([{ cancel: `then-scheduled-${cat}` }, { cancel: `moved-${cat}` }])
  t.match(await timers.get(`then-scheduled-${cat}`), { state: 'cancelled' }, 'cancels alone')
  t.match(await timers.get(`moved-${cat}`), { state: 'cancelled' })
  await t.rejects(timers.change([{ schedule: { ...spec('bad', 0), subject: 'orders.x' } }]), /must start with/)
})
