import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { sql } from 'kysely'
import t from 'tap'
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store.js'
import { type DatabaseHandle, openDatabase } from '../../../src/infrastructure/database/connection.js'
import { AppendNotices } from '../../../src/infrastructure/event-store/append-notices.js'
import type { Upcaster } from '../../../src/infrastructure/event-store/upcasting.js'
import { openTestDatabase } from '../../helpers/test-database.js'
import { readAllVisible } from '../../helpers/read-all-visible.js'
import { type ContractSubject, eventStoreContract } from './contract.js'

/** Opens its own connection, begins, and writes one raw event row that stays uncommitted until asked. */
function rawHolder(url: string, t: { teardown(fn: () => unknown): void }): NonNullable<ContractSubject['holdAppend']> {
  return async (streamId, opts = {}) => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    t.teardown(() => client.end().catch(() => undefined))
    await client.query('begin')
    let inserted = false
    const insertNow = async () => {
      if (inserted) return
      inserted = true
      await client.query(
        `insert into es_events (stream_id, stream_version, event_id, type, data, metadata)
         values ($1, 1, $2, 'Raced', '{"n": 0}', $3)`,
        [streamId, randomUUID(), JSON.stringify({ actor: { kind: 'system', id: 'race' }, occurred_at: new Date().toISOString() })],
      )
    }
    if (opts.takeIdOnly) await client.query('select pg_current_xact_id()')
    else await insertNow()
    return {
      insertNow,
      async commit() { await client.query('commit'); await client.end() },
      async rollback() { await client.query('rollback'); await client.end() },
    }
  }
}

eventStoreContract(t, async (t) => {
  const database = await openTestDatabase(t)
  const store = new PostgresEventStore(database.db)
  await store.listenWith(database.listen)
  t.teardown(() => store.close())
  const upcasting = async (upcast: Upcaster) => new PostgresEventStore(database.db, upcast)
  return { store, upcasting, holdAppend: rawHolder(database.url, t) }
})

t.test('group commit: concurrent appends share transactions, and each keeps its own outcome', async (t) => {
  const database = await openTestDatabase(t)
  const store = new PostgresEventStore(database.db)
  t.teardown(() => store.close())
  const ev = (n: number, id?: string) => ({ ...(id ? { id } : {}), type: 'Happened', data: { n }, metadata: { actor: { kind: 'system' as const, id: 'test' }, occurred_at: new Date().toISOString() } })
  const tag = randomUUID().slice(0, 8)
  await store.append(`pair-${tag}`, [ev(0)], 'no_stream')
  const repeated = randomUUID()
  const outcomes = await Promise.allSettled([
    // 40 new streams
    ...Array.from({ length: 40 }, (_, i) => store.append(`fresh-${tag}-${i}`, [ev(i), ev(i + 1)], 'no_stream')),
    // two writers at the same expected version of one stream: exactly one wins
    store.append(`pair-${tag}`, [ev(1)], 1),
    store.append(`pair-${tag}`, [ev(2)], 1),
    // one event id appended five times: stored once
    ...Array.from({ length: 5 }, () => store.append(`idem-${tag}`, [ev(7, repeated)], 'any')),
    // twenty 'any' appends to one stream: twenty distinct versions
    ...Array.from({ length: 20 }, (_, i) => store.append(`any-${tag}`, [ev(i)], 'any')),
  ])
  const at = (from: number, n: number) => outcomes.slice(from, from + n)
  t.ok(at(0, 40).every((o) => o.status === 'fulfilled' && o.value.appended && o.value.nextVersion === 2), 'every new stream appended at version 2')
  const pair = at(40, 2)
  t.equal(pair.filter((o) => o.status === 'fulfilled').length, 1, 'one writer of the pair wins')
  t.match(pair.find((o) => o.status === 'rejected'), { reason: { code: 'concurrency_conflict' } }, 'the other gets a typed conflict')
  const idem = at(42, 5)
  t.ok(idem.every((o) => o.status === 'fulfilled'), 'repeating an event id is not an error')
  t.equal(idem.filter((o) => o.status === 'fulfilled' && o.value.appended).length, 1, 'the repeated id is appended once')
  t.equal((await store.readStream(`idem-${tag}`)).length, 1)
  const versions = at(47, 20).map((o) => (o.status === 'fulfilled' ? o.value.nextVersion : -1))
  t.same([...versions].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1), "'any' appends get versions 1..20, none lost")
  t.same((await store.readStream(`any-${tag}`)).map((e) => e.streamVersion), Array.from({ length: 20 }, (_, i) => i + 1))
  // Group commit happened: the 40 creations took fewer transactions than appends.
  const r = await sql<{ n: string }>`select count(distinct transaction_id) as n from es_events where stream_id like ${`fresh-${tag}-%`}`.execute(database.db)
  const transactions = Number(r.rows[0]!.n)
  t.ok(transactions < 40, `40 creations in ${transactions} transactions`)
  // Everything is readable in commit order with nothing skipped.
  const fresh = await readAllVisible(store, (e) => e.streamId.startsWith(`fresh-${tag}-`), 80)
  t.equal(fresh.length, 80)

  // Two creations of one stream in one batch make the batch fail as a whole: it falls back to one
  // append at a time, so exactly one creation wins and the others of the batch are still appended.
  const second = await Promise.allSettled([
    ...Array.from({ length: 10 }, (_, i) => store.append(`more-${tag}-${i}`, [ev(i)], 'no_stream')),
    store.append(`twice-${tag}`, [ev(1)], 'no_stream'),
    store.append(`twice-${tag}`, [ev(2)], 'no_stream'),
  ])
  t.ok(second.slice(0, 10).every((o) => o.status === 'fulfilled' && o.value.appended), 'the rest of the batch is appended')
  const twice = second.slice(10)
  t.equal(twice.filter((o) => o.status === 'fulfilled').length, 1, 'one creation wins')
  t.match(twice.find((o) => o.status === 'rejected'), { reason: { code: 'concurrency_conflict' } })
  t.equal((await store.readStream(`twice-${tag}`)).length, 1)
})

const happened = (data: unknown = {}) =>
  ({ type: 'Happened', data, metadata: { actor: { kind: 'system' as const, id: 'test' }, occurred_at: new Date().toISOString() } })

/** A writer, and a reader in a second process listening for its NOTIFY. */
async function writerAndListener(t: { teardown(fn: () => unknown): void }, notices?: (db: DatabaseHandle['db']) => AppendNotices) {
  const database = await openTestDatabase(t)
  const writer = new PostgresEventStore(database.db, undefined, undefined, notices?.(database.db))
  t.teardown(() => writer.close())
  const other = await openDatabase({ url: database.url })
  t.teardown(() => other.close())
  const reader = new PostgresEventStore(other.db)
  await reader.listenWith(other.listen)
  t.teardown(() => reader.close())
  return { writer, reader }
}

t.test('another process hears of appends by NOTIFY, the last of a quick series included', async (t) => {
  const { writer, reader } = await writerAndListener(t)
  const wakes: number[] = []
  reader.onAppended(() => wakes.push(Date.now()))
  const tag = randomUUID().slice(0, 8)
  for (let i = 0; i < 20; i++) await writer.append(`series-${tag}-${i}`, [happened({ i })], 'no_stream')
  const lastAppend = Date.now()
  for (let i = 0; i < 100 && !wakes.some((w) => w >= lastAppend); i++) await new Promise((r) => setTimeout(r, 10))
  t.ok(wakes.some((w) => w >= lastAppend), 'a notification after the last append arrives (the trailing one)')
  const series = await readAllVisible(reader, (e) => e.streamId.startsWith(`series-${tag}-`), 20)
  t.equal(series.length, 20, 'and the reader then sees every event')
})

t.test('appends that come within one interval share a notification: one at once, one trailing', async (t) => {
  // Driven directly: through real appends the count depends on how slow the machine is.
  let notices: AppendNotices | undefined
  const { reader } = await writerAndListener(t, (db) => (notices = new AppendNotices(db)))
  let heard = 0
  reader.onAppended(() => { heard++ })
  for (let i = 0; i < 20; i++) notices!.appended()
  for (let i = 0; i < 100 && heard < 2; i++) await new Promise((r) => setTimeout(r, 10))
  await new Promise((r) => setTimeout(r, 100))
  t.equal(heard, 2, `20 appends in one interval: ${heard} notifications`)
})

t.test('no NOTIFY while a part of the process says it covers the readers elsewhere; its own readers still wake at once', async (t) => {
  let needed = false
  const { writer, reader } = await writerAndListener(t, (db) => {
    const notices = new AppendNotices(db)
    notices.coveredBy(() => !needed)
    return notices
  })
  let ownWakes = 0
  writer.onAppended(() => { ownWakes++ })
  const tag = randomUUID().slice(0, 8)
  let heard = 0
  reader.onAppended(() => { heard++ })
  for (let i = 0; i < 5; i++) await writer.append(`quiet-${tag}-${i}`, [happened({ i })], 'no_stream')
  await new Promise((r) => setTimeout(r, 200))
  t.equal(heard, 0, 'the other process heard nothing')
  t.ok(ownWakes >= 5, 'this process\'s readers were woken by each append')
  needed = true
  await writer.append(`loud-${tag}`, [happened({ i: 5 })], 'no_stream')
  for (let i = 0; i < 100 && heard === 0; i++) await new Promise((r) => setTimeout(r, 10))
  t.ok(heard > 0, 'once nothing covers them, the NOTIFY goes again')
})

t.test('a batch of every expected-version mode goes in one set-based statement; a conflict in it still answers each append exactly', async (t) => {
  const database = await openTestDatabase(t)
  // One batch in flight: whatever arrives while the first append runs goes together as the next batch.
  const store = new PostgresEventStore(database.db, undefined, 1)
  t.teardown(() => store.close())
  const ev = (n: number) => ({ type: 'Happened', data: { n }, metadata: { actor: { kind: 'system' as const, id: 'test' }, occurred_at: new Date().toISOString() } })
  const tag = randomUUID().slice(0, 8)
  await store.append(`exact-${tag}`, [ev(0), ev(1)], 'no_stream')
  await store.append(`exists-${tag}`, [ev(0)], 'no_stream')
  await store.append(`anyold-${tag}`, [ev(0)], 'no_stream')

  const before = Number((await sql<{ n: string }>`select count(*) as n from es_events`.execute(database.db)).rows[0]!.n)
  const [lead, ...batch] = await Promise.all([
    store.append(`lead-${tag}`, [ev(0)], 'no_stream'),
    store.append(`exact-${tag}`, [ev(2)], 2),
    store.append(`exists-${tag}`, [ev(1), ev(2)], 'stream_exists'),
    store.append(`anyold-${tag}`, [ev(1)], 'any'),
    store.append(`anynew-${tag}`, [ev(0)], 'any'),
    store.appendMany([{ streamId: `g1-${tag}`, events: [ev(0)], expected: 'no_stream' }, { streamId: `g2-${tag}`, events: [ev(0), ev(1), ev(2)], expected: 'no_stream' }]),
  ])
  t.ok(lead!.appended)
  t.same(batch.map((r) => (Array.isArray(r) ? r.map((x) => x.nextVersion) : r.nextVersion)), [3, 3, 2, 1, [1, 3]], 'each append answers its own new version')
  const rows = await sql<{ stream_id: string; stream_version: string; tx: string }>`
    select stream_id, stream_version, transaction_id::text as tx from es_events
    order by transaction_id, global_position offset ${before}`.execute(database.db)
  const batchRows = rows.rows.filter((r) => !r.stream_id.startsWith('lead-'))
  t.equal(new Set(batchRows.map((r) => r.tx)).size, 1, 'the five appends and the group went in one transaction')
  t.same(batchRows.map((r) => `${r.stream_id.split('-')[0]}:${r.stream_version}`).sort(),
    ['anynew:1', 'anyold:2', 'exact:3', 'exists:2', 'exists:3', 'g1:1', 'g2:1', 'g2:2', 'g2:3'], 'every event at its version')
  t.same((await store.readStream(`g2-${tag}`)).map((e) => (e.data as { n: number }).n), [0, 1, 2], 'events keep their order')

  // The same batch with one stale expected version inside an atomic group: that group fails
  // whole with a typed conflict, every other append of the batch is appended.
  const [lead2, ...second] = await Promise.allSettled([
    store.append(`lead2-${tag}`, [ev(0)], 'no_stream'),
    store.append(`exact-${tag}`, [ev(3)], 3),
    store.appendMany([{ streamId: `g3-${tag}`, events: [ev(0)], expected: 'no_stream' }, { streamId: `exists-${tag}`, events: [ev(9)], expected: 1 }]),
    store.append(`anynew-${tag}`, [ev(1)], 'any'),
  ])
  t.equal(lead2!.status, 'fulfilled')
  t.match(second[0], { status: 'fulfilled', value: { appended: true, nextVersion: 4 } })
  t.match(second[1], { status: 'rejected', reason: { code: 'concurrency_conflict' } }, 'the group with the stale version is refused')
  t.match(second[2], { status: 'fulfilled', value: { appended: true, nextVersion: 2 } })
  t.same(await store.readStream(`g3-${tag}`), [], "the group's other stream was not created")
  t.equal((await store.readStream(`exists-${tag}`)).length, 3, 'the stale append added nothing')
})
