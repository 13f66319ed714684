// A connection PostgreSQL drops while the application holds it (pg_terminate_backend: the 57P01 a
// restart sends to every session) is an error of the statement that used it, never an uncaught
// 'error' event; every pool of the handle (main, dedicated, request reads) and the LISTEN
// connection come back by themselves. The error reads as "database unavailable".
import t from 'tap'
import { sql } from 'kysely'
import pg from 'pg'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { isDatabaseUnavailable } from '../../src/shared/unavailable.js'
import { createScratchDatabase } from '../helpers/test-database.js'

const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 10_000) => {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

t.test('sessions terminated while held or idle: errors of their statements, then reconnected', async (t) => {
  const url = await createScratchDatabase(t)
  const uncaught: unknown[] = []
  const onUncaught = (err: unknown) => { uncaught.push(err) }
  process.on('uncaughtException', onUncaught)
  t.teardown(() => { process.off('uncaughtException', onUncaught) })
  const database = await openDatabase({ url, poolSize: 2, connectTimeoutMs: 1000 })
  t.teardown(() => database.close())
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  t.teardown(() => admin.end())
  const terminateAll = () => admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and application_name like 'shipping-%'`)

  const heard: string[] = []
  await database.listen('outage_test', (p) => { heard.push(p) })
  const dedicated = database.dedicated('outage', 1)
  const reads = database.requestReads({ statementTimeoutMs: 5000 })(new AbortController().signal)
  for (const db of [database.db, dedicated, reads]) await sql`select 1`.execute(db)

  // Held: a transaction of each pool sits between two statements when its session is terminated.
  const held = [database.db, dedicated, reads].map((db) => db.transaction().execute(async (trx) => {
    await sql`select 1`.execute(trx)
    await new Promise((r) => setTimeout(r, 300))
    await sql`select 1`.execute(trx)
  }).then(() => undefined, (err: unknown) => err))
  await new Promise((r) => setTimeout(r, 100))
  await terminateAll()
  const errors = await Promise.all(held)
  t.ok(errors.every((e) => e !== undefined), 'each held transaction failed')
  t.ok(errors.every((e) => isDatabaseUnavailable(e)), `each failure reads as the database unavailable: ${errors.map(String).join('; ')}`)
  // Give a stray 'error' event its turn on the loop.
  await new Promise((r) => setTimeout(r, 100))
  t.same(uncaught, [], 'no uncaught error')

  // Idle ones too (the pools' own listeners), and the LISTEN connection.
  await terminateAll()
  await new Promise((r) => setTimeout(r, 100))
  for (const db of [database.db, dedicated, reads]) await until('the pool to answer again', () => sql`select 1`.execute(db).then(() => true, () => false))
  t.pass('every pool answers again')
  await until('the LISTEN connection to be back', async () => {
    await admin.query(`notify outage_test, 'after'`)
    await new Promise((r) => setTimeout(r, 50))
    return heard.includes('after')
  })
  t.pass('LISTEN re-subscribed: a notification sent after the drop arrives')
  t.same(uncaught, [], 'still no uncaught error')
})

t.test('a server that does not listen: refused at once, as unavailable', async (t) => {
  const probe = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres' })
  const err = await probe.connect().then(() => undefined, (e: unknown) => e)
  t.ok(isDatabaseUnavailable(err), `ECONNREFUSED: ${String(err)}`)
  t.notOk(isDatabaseUnavailable(Object.assign(new Error('duplicate key value'), { code: '23505', severity: 'ERROR' })), 'a refused statement is not')
})
