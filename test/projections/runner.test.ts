import { sql } from 'kysely'
import t from 'tap'
import { ProjectionRunner } from '../../projections/runner.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { migrateReadModels } from '../../src/infrastructure/database/migrate.js'
import type { EventStore } from '../../src/infrastructure/event-store/event-store.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { counted, countedState, countingProjection, createCountingTables } from './fixtures/counting-projection.js'

const until = async (what: string, ok: () => Promise<boolean>, ms = 15_000): Promise<void> => {
  const end = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Delegates to a real store, but lets a test hold one caller's readAll at a gate. */
function gatedStore(inner: EventStore): EventStore & { gate(): { release(): void; reached: Promise<void> } } {
  let gate: { open: Promise<void>; arrived: () => void } | undefined
  return Object.assign(Object.create(inner) as EventStore, {
    async readAll(checkpoint: string | null, limit: number) {
      const g = gate
      gate = undefined
      if (g) { g.arrived(); await g.open }
      return inner.readAll(checkpoint, limit)
    },
    comparePositions: (a: string, b: string) => inner.comparePositions(a, b),
    onAppended: (l: () => void) => inner.onAppended(l),
    headPosition: () => inner.headPosition(),
    gate() {
      let release!: () => void
      let arrived!: () => void
      const open = new Promise<void>((r) => { release = r })
      const reached = new Promise<void>((r) => { arrived = r })
      gate = { open, arrived }
      return { release, reached }
    },
  })
}

/** Waits until `n` events of the stream are visible to readAll (another test's open transaction can hide them a while). */
async function visible(store: EventStore, streamId: string, n: number): Promise<void> {
  await until(`${n} events of ${streamId} to be visible`, async () => {
    let seen = 0
    let checkpoint: string | null = null
    for (;;) {
      const page = await store.readAll(checkpoint, 1000)
      if (page.events.length === 0) return seen >= n
      seen += page.events.filter((e) => e.streamId === streamId).length
      checkpoint = page.checkpoint
    }
  })
}

t.test('projection runner', async (t) => {
  const database = await openTestDatabase(t, { readModels: true })
  const db = database.db
  await createCountingTables(db)
  const store = new PostgresEventStore(db)
  await store.listenWith(database.listen)

  t.test('checkpoint compare-and-set: a runner that read a stale checkpoint applies nothing', async (t) => {
    await sql`truncate read_model.counted_events, read_model.counted_total`.execute(db)
    const name = 'cas'
    const gated = gatedStore(store)
    const slow = new ProjectionRunner(db, gated, [countingProjection({ name })], { batchSize: 100 })
    const fast = new ProjectionRunner(db, store, [countingProjection({ name })], { batchSize: 100 })
    await store.append('counted-cas', [counted(1), counted(2), counted(3)], 'no_stream')
    await visible(store, 'counted-cas', 3)
    const { release, reached } = gated.gate()
    const slowStep = slow.stepAll()
    await reached // slow has read checkpoint "start" and waits before reading events
    t.equal(await fast.stepAll(), true, 'the other runner applies the batch')
    release()
    t.equal(await slowStep, false, 'the stale runner\'s compare-and-set fails')
    const state = await countedState(db, name)
    t.same({ rows: state.rows, doubled: state.doubled, applied: state.applied }, { rows: 3, doubled: 0, applied: 3 }, 'each event applied once')
  })

  // On PostgreSQL the runners also run with sendStatements: each round (compare-and-set and writes) in one round trip.
  for (const oneTrip of database.sendStatements ? [false, true] : [false]) {
  const mode = oneTrip ? ' (rounds in one round trip)' : ''
  t.test(`two runners (separate connections) racing over one log apply every event exactly once${mode}`, async (t) => {
    await sql`truncate read_model.counted_events, read_model.counted_total`.execute(db)
    const name = oneTrip ? 'twins1' : 'twins'
    // The second runner has its own pool, like a second API process.
    const other = await openDatabase({ url: database.url, poolSize: 4 })
    t.teardown(() => other.close())
    const otherStore = new PostgresEventStore(other.db)
    await otherStore.listenWith!(other.listen)
    const batches = [0, 0]
    let sent = 0
    const send = (h: Pick<typeof database, 'sendStatements'>) => (oneTrip && h.sendStatements ? { sendStatements: async (text: string) => { await h.sendStatements!(text); sent++ } } : {})
    let applied = 0
    const projection = () => { const p = countingProjection({ name, oneTrip }); const apply = p.apply.bind(p); return { ...p, apply: (...args: Parameters<typeof apply>) => { applied++; return apply(...args) } } }
    const a = new ProjectionRunner(db, store, [projection()], { batchSize: 7, pollMs: 20, onBatch: () => { batches[0]!++ }, ...send(database) })
    const b = new ProjectionRunner(other.db, otherStore, [projection()], { batchSize: 7, pollMs: 20, onBatch: () => { batches[1]!++ }, ...send(other) })
    await a.start()
    await b.start()
    t.teardown(async () => { await a.stop(); await b.stop() })
    const total = 400
    const writers = Array.from({ length: 4 }, (_, w) => (async () => {
      for (let i = 0; i < total / 4; i += 4) {
        const s = other && w % 2 ? otherStore : store
        await s.append(`counted-${name}-${w}`, [0, 1, 2, 3].map((k) => counted(w * 1000 + i + k)), 'any')
      }
    })())
    await Promise.all(writers)
    await until('both runners to catch up', async () => (await countedState(db, name)).applied >= total)
    await new Promise((r) => setTimeout(r, 200))
    const state = await countedState(db, name)
    t.equal(state.rows, total, 'every event has its row')
    t.equal(state.doubled, 0, 'no row was applied twice')
    t.equal(state.applied, total, 'the application counter equals the number of events')
    t.comment(`batches applied: runner A ${batches[0]}, runner B ${batches[1]}`)
    t.ok(batches[0]! + batches[1]! >= Math.ceil(total / 7), 'the work went through batches')
    if (oneTrip) {
      t.ok(sent >= Math.ceil(total / 7) / 2, `most rounds went through in one round trip each (${sent} committed)`)
      t.comment(`rounds through apply (usual path: first rounds, after a lost race): ${applied}`)
      t.ok(applied < sent, 'the usual path is the exception')
    }
  })

  t.test(`an event the projection throws on is parked and the runner moves on${mode}`, async (t) => {
    await sql`truncate read_model.counted_events, read_model.counted_total`.execute(db)
    const name = oneTrip ? 'parking1' : 'parking'
    const sent: string[] = []
    let committed = 0
    const runner = new ProjectionRunner(db, store, [countingProjection({ name, oneTrip })], {
      batchSize: 100, ...(oneTrip ? { sendStatements: async (text: string) => { sent.push(text); await database.sendStatements!(text); committed++ } } : {}),
    })
    const r = await store.append(`counted-${name}`, [counted(1), counted(2), counted(3, { poison: true }), counted(4), counted(5)], 'no_stream')
    await runner.start()
    t.teardown(() => runner.stop())
    t.equal(await runner.waitFor(r.position, 10_000), true, 'the runner passes the poisoned batch')
    const state = await countedState(db, name)
    t.same(state.ns, [1, 2, 4, 5], 'the other events of the batch are applied')
    t.equal(state.doubled, 0)
    t.equal(state.applied, 4, 'the failed batch attempt was rolled back, so nothing counts twice')
    const parked = await sql<{ projection: string; event_id: string; position: string; error: string }>`
      select * from read_model.projection_parked where projection = ${name}`.execute(db)
    const poisoned = (await store.readStream(`counted-${name}`))[2]!
    t.equal(parked.rows.length, 1, 'one event is parked')
    t.equal(parked.rows[0]?.event_id, poisoned.id)
    t.equal(parked.rows[0]?.position, poisoned.position)
    t.match(parked.rows[0]?.error, /poisoned event 3/)
    t.equal(runner.parkedCount.get(name), 1)
    const later = await store.append(`counted-${name}`, [counted(6)], 5)
    t.equal(await runner.waitFor(later.position, 10_000), true)
    t.same((await countedState(db, name)).ns, [1, 2, 4, 5, 6], 'later events keep flowing')
    if (oneTrip) {
      t.ok(sent.some((text) => /poisoned event 3/.test(text)), 'the poisoned round went in one trip and failed on the server, mid-string')
      t.ok(committed >= 1, 'after the careful round, rounds go in one trip again and commit')
    }
  })
  }

  t.test('waitFor resolves only once the write is visible (read-your-writes)', async (t) => {
    await sql`truncate read_model.counted_events, read_model.counted_total`.execute(db)
    const name = 'ryw'
    const runner = new ProjectionRunner(db, store, [countingProjection({ name })], { pollMs: 60_000 })
    t.equal(await runner.waitFor((await store.append('counted-ryw', [counted(0)], 'no_stream')).position, 200), false,
      'a stopped runner does not pretend to have passed a position')
    await runner.start()
    t.teardown(() => runner.stop())
    for (let i = 1; i <= 20; i++) {
      const { position } = await store.append('counted-ryw', [counted(i)], i)
      t.equal(await runner.waitFor(position, 5000), true)
      const row = await sql<{ n: number }>`select n from read_model.counted_events where n = ${i}`.execute(db)
      if (row.rows.length !== 1) t.fail(`event ${i} not visible after waitFor`)
    }
    t.equal((await countedState(db, name)).applied, 21, 'every write was visible right after waitFor')
    const status = await runner.status()
    t.same(status.map((s) => [s.name, s.lag]), [[name, 0]], 'status reports no lag once caught up')
  })

  t.test('waitFor: many requests waiting on one round, two projections, each sees its write', async (t) => {
    await sql`truncate read_model.counted_events, read_model.counted_total`.execute(db)
    const runner = new ProjectionRunner(db, store, [countingProjection({ name: 'rywa' }), countingProjection({ name: 'rywb' })], { pollMs: 60_000 })
    await runner.start()
    t.teardown(() => runner.stop())
    const seen = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
      const stream = `counted-${i % 2 ? 'rywb' : 'rywa'}-${i}`
      const { position } = await store.append(stream, [counted(100 + i)], 'no_stream')
      const ok = await runner.waitFor(position, 5000)
      const row = await sql<{ n: number }>`select n from read_model.counted_events where n = ${100 + i}`.execute(db)
      return ok && row.rows.length === 1
    }))
    t.same(seen.filter((ok) => !ok).length, 0, 'every waiter resolved true, after its row was there')
    t.equal((await countedState(db, 'rywa')).applied + (await countedState(db, 'rywb')).applied, 30)
    t.same((await runner.status()).map((s) => s.lag), [0, 0], 'both projections caught up')
  })

  t.test('status counts the events a projection has not passed yet', async (t) => {
    const runner = new ProjectionRunner(db, store, [countingProjection({ name: 'lagging' })])
    const head = await sql<{ n: number }>`select count(*)::int as n from es_events`.execute(db)
    const [s] = await runner.status()
    t.equal(s?.lag, Number(head.rows[0]!.n), 'a projection at the start lags by the whole log')
  })

  t.test('status takes the lag from the event-store port: unknown until caught up on a store that cannot count', async (t) => {
    // A plain delegating object that counts as KurrentDB does: only "caught up" is known.
    const foreign: EventStore = {
      append: (...a) => store.append(...a),
      appendMany: (a) => store.appendMany(a),
      readStream: (...a) => store.readStream(...a),
      readStreams: (...a) => store.readStreams(...a),
      readAll: (...a) => store.readAll(...a),
      onAppended: (l) => store.onAppended(l),
      headPosition: () => store.headPosition(),
      eventsAfter: async (p) => (store.comparePositions(p, await store.headPosition()) >= 0 ? 0 : null),
      comparePositions: (a, b) => store.comparePositions(a, b),
      startPosition: store.startPosition,
      close: async () => undefined,
    }
    const name = 'foreign'
    const runner = new ProjectionRunner(db, foreign, [countingProjection({ name })])
    await foreign.append('counted-foreign', [counted(1)], 'no_stream')
    t.same((await runner.status()).map((s) => s.lag), [null], 'behind the head: lag unknown')
    while (await runner.catchUp()) await new Promise((r) => setTimeout(r, 20))
    t.same((await runner.status()).map((s) => s.lag), [0], 'at the head: no lag')
  })

  t.test('the rebuild schema has its own lock names', async (t) => {
    const { projectionLockName } = await import('../../projections/runner.js')
    t.equal(projectionLockName('organizations'), 'projection:organizations')
    t.not(projectionLockName('organizations', 'read_model_rebuild'), projectionLockName('organizations'))
    await migrateReadModels(db, 'read_model_lock_test')
    await createCountingTables(db, 'read_model_lock_test')
    await store.append('counted-locks', [counted(1), counted(2)], 'no_stream')
    await visible(store, 'counted-locks', 2)
    const live = new ProjectionRunner(db, store, [countingProjection({ name: 'locks' })])
    const rebuild = new ProjectionRunner(db, store, [countingProjection({ name: 'locks' })], { schema: 'read_model_lock_test' })
    // Hold the live lock in an open transaction: the rebuild runner must still make progress.
    const holder = await openDatabase({ url: database.url, poolSize: 1 })
    t.teardown(() => holder.close())
    let release!: () => void
    const released = new Promise<void>((r) => { release = r })
    let locked!: () => void
    const isLocked = new Promise<void>((r) => { locked = r })
    const holding = holder.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${projectionLockName('locks')}, 0))`.execute(trx)
      locked()
      await released
    })
    await isLocked
    t.equal(await live.stepAll(), false, 'the live runner waits for its lock holder')
    t.equal(await rebuild.stepAll(), true, 'the rebuild runner is not blocked by it')
    release()
    await holding
    const state = await countedState(db, 'locks', 'read_model_lock_test')
    t.same([state.rows, state.doubled], [2, 0], 'rows land in the rebuild schema')
  })
})
