import t from 'tap'
import { type ChangeNotice, changedKeys, decodeChangeNotice, encodeChangeNotice, MAX_NOTICE_BYTES } from '../../projections/change-notices.js'
import { ReadModelChanges } from '../../projections/read-model-changes.js'
import { ProjectionRunner } from '../../projections/runner.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { openTestDatabase, secondConnection } from '../helpers/test-database.js'
import { counted, COUNTED_TOPIC, countingProjection, createCountingTables } from './fixtures/counting-projection.js'

const notice = (keys: Record<string, (string | number)[]>): ChangeNotice => ({ batch: 'b.1', keys, whole: [], everything: false })

t.test('encoding: keys per topic; the biggest topics go whole above the NOTIFY limit; unreadable is everything', async (t) => {
  const small = notice({ shipments: [1, 22], catalogs: ['org_x'] })
  t.same(decodeChangeNotice(encodeChangeNotice(small)), small)
  const many = Array.from({ length: 2_000 }, (_, i) => 10_000_000 + i)
  const big = encodeChangeNotice(notice({ shipments: many, catalogs: ['org_x'] }))
  t.ok(Buffer.byteLength(big) <= MAX_NOTICE_BYTES)
  const decoded = decodeChangeNotice(big)
  t.equal(changedKeys(decoded, 'shipments'), 'all', 'the topic that did not fit is whole')
  t.same(changedKeys(decoded, 'catalogs'), ['org_x'], 'the others keep their keys')
  t.same(changedKeys(decoded, 'other'), [], 'a topic it does not name did not change')
  for (const bad of ['', 'garbage', '{"b":"x","k":{"s":[{"a":1}]},"w":[]}', '{"b":"x","k":[],"w":[]}']) {
    t.equal(decodeChangeNotice(bad).everything, true, `unreadable: ${JSON.stringify(bad)}`)
    t.equal(changedKeys(decodeChangeNotice(bad), 'shipments'), 'all')
  }
})

t.test('a projection\'s changed rows reach a subscriber in this process before the commit, and every process by NOTIFY at the commit', async (t) => {
  const database = await openTestDatabase(t, { readModels: true })
  await createCountingTables(database.db)
  const store = new PostgresEventStore(database.db)
  await store.listenWith(database.listen)
  // Another process: its own connection.
  const other = await secondConnection(t, database)

  for (const oneTrip of database.sendStatements ? [false, true] : [false]) {
    t.test(oneTrip ? 'rounds in one round trip' : 'rounds in a transaction', async (t) => {
      const name = oneTrip ? 'noticed1' : 'noticed'
      const here = new ReadModelChanges(database.listen)
      const there = new ReadModelChanges(other.listen)
      t.teardown(async () => { await here.close(); await there.close() })
      const seenHere: { changing: ChangeNotice[]; changed: [ChangeNotice, ChangeNotice | undefined][] } = { changing: [], changed: [] }
      const seenThere: ChangeNotice[] = []
      await here.subscribe({
        changing: (n) => { seenHere.changing.push(n) },
        changed: (n, announced) => { seenHere.changed.push([n, announced]) },
      })
      await there.subscribe({ changing: () => t.fail('another process is never announced to'), changed: (n) => { seenThere.push(n) } })
      const runner = new ProjectionRunner(database.db, store, [countingProjection({ name, oneTrip, notices: true }), countingProjection({ name: `quiet${oneTrip ? 1 : ''}`, oneTrip })], {
        announce: (n) => here.announce(n),
        ...(oneTrip ? { sendStatements: async (text: string) => { await database.sendStatements!(text) } } : {}),
      })
      const r = await store.append(`counted-${name}`, [counted(101), counted(102), counted(103)], 'no_stream')
      await runner.start()
      t.teardown(() => runner.stop())
      t.equal(await runner.waitFor(r.position, 10_000), true)

      t.equal(seenHere.changing.length, 1, 'one in-process notice for the round')
      const announced = seenHere.changing[0]!
      t.same(changedKeys(announced, COUNTED_TOPIC), [101, 102, 103], 'it names the changed rows')

      const until = async (what: string, ok: () => boolean) => {
        const end = Date.now() + 5_000
        while (!ok()) {
          if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
          await new Promise((r) => setTimeout(r, 5))
        }
      }
      await until('the NOTIFY here', () => seenHere.changed.length > 0)
      await until('the NOTIFY in the other process', () => seenThere.length > 0)
      const [received, settles] = seenHere.changed[0]!
      t.same(changedKeys(received, COUNTED_TOPIC), [101, 102, 103], 'the NOTIFY names the same rows')
      t.equal(settles, announced, 'and settles this process\'s own announcement of that round')
      t.same(changedKeys(seenThere[0]!, COUNTED_TOPIC), [101, 102, 103], 'another process hears the changed rows by NOTIFY')
      t.equal(seenThere[0]!.batch, announced.batch, 'the same round')

      const quiet = await store.append(`counted-quiet${oneTrip ? 1 : ''}`, [counted(1)], 'no_stream')
      t.equal(await runner.waitFor(quiet.position, 10_000), true)
      await new Promise((r) => setTimeout(r, 100))
      t.equal(seenHere.changing.length + seenThere.length, 2, 'a round that changes nothing sends no notice')
    })
  }

})
