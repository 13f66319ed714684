// A stream that moves while an atomic multi-stream append waits for its lock is a ConcurrencyError
// (the caller retries or answers 409), not the database function's internal ES002.
import pg from 'pg'
import t from 'tap'
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store.js'
import { ConcurrencyError } from '../../../src/infrastructure/event-store/event-store.js'
import { openTestDatabase } from '../../helpers/test-database.js'

const metadata = { actor: { kind: 'system' as const, id: 'race' }, occurred_at: new Date().toISOString() }

t.test('appendMany: a stream moved while the append waited for its lock', async (t) => {
  const db = await openTestDatabase(t)
  const store = new PostgresEventStore(db.db)
  await store.append('race-a', [{ type: 'One', data: {}, metadata }], 'no_stream')

  // Another writer holds race-a's row and moves it on; our append checks (version 1: fine),
  // then waits for the lock, and finds version 2 once it gets it.
  const other = new pg.Client({ connectionString: db.url })
  await other.connect()
  t.teardown(() => other.end().catch(() => undefined))
  await other.query('begin')
  await other.query(`update es_streams set version = version + 1 where stream_id = 'race-a'`)

  const appending = store.appendMany([
    { streamId: 'race-a', expected: 1, events: [{ type: 'Two', data: {}, metadata }] },
    { streamId: 'race-b', expected: 'no_stream', events: [{ type: 'One', data: {}, metadata }] },
  ])
  appending.catch(() => undefined)
  await new Promise((r) => setTimeout(r, 300)) // it is now waiting on the lock
  await other.query('commit')

  const err = await appending.then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ConcurrencyError, `a ConcurrencyError (got ${String(err)})`)
  t.equal((err as ConcurrencyError).streamId, 'race-a', 'naming the stream that moved')
  t.same(await store.readStream('race-b'), [], 'and nothing of the other stream was written')
})
