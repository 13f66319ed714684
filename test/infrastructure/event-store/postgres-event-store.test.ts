import { randomUUID } from 'node:crypto'
import pg from 'pg'
import t from 'tap'
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store.js'
import { openTestDatabase, testDbKind } from '../../helpers/test-database.js'
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
  t.comment(`PostgresEventStore on ${testDbKind() === 'postgres' ? 'a PostgreSQL server' : 'PGlite (in memory)'}`)
  if (database.url) return { store, holdAppend: rawHolder(database.url, t) }
  return {
    store,
    noRaceReason: 'PGlite has a single connection, so no second transaction can stay open; the race runs under TEST_DB=postgres (npm test)',
  }
})
