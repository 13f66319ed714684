import { sql, type Kysely } from 'kysely'
import t from 'tap'
import { openDatabase, type DatabaseHandle } from '../../../src/infrastructure/database/connection.js'
import { isCancelledStatement, RequestAbandonedError } from '../../../src/infrastructure/database/cancelled-statement.js'
import { createScratchDatabase, openTestDatabase, testDbKind } from '../../helpers/test-database.js'

/**
 * The request's side of the main pool (request-pool.ts), with one connection so that requests and
 * background work take turns on the same backend: the request's timeout must never stay behind
 * for the background (the in-process bus, the notifier, timers share this pool).
 */
async function onePool(t: Parameters<typeof openTestDatabase>[0]): Promise<DatabaseHandle> {
  if (testDbKind() !== 'postgres') return openTestDatabase(t, { migrate: false })
  const handle = await openDatabase({ url: await createScratchDatabase(t), poolSize: 1 })
  t.teardown(() => handle.close())
  return handle
}

const timeoutNow = async (db: Kysely<any>) => (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)).rows[0]!.statement_timeout
const failure = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err)

t.test('a request\'s statements run under its timeout; background statements never do', async (t) => {
  const h = await onePool(t)
  const work = h.requestWork({ statementTimeoutMs: 300 })
  if (h.kind === 'pglite') {
    // Documented: nothing to cut on PGlite; the work runs as it is.
    t.equal(await work.run(() => timeoutNow(h.db)), '0', 'PGlite: the request\'s work runs under no timeout')
    t.equal(await failure(work.run(() => sql`select pg_sleep(0.5)`.execute(h.db))), undefined, 'PGlite: a long statement runs to its end')
    return
  }
  t.equal(await timeoutNow(h.db), '0', 'background: the server\'s default')
  t.equal(await work.run(() => timeoutNow(h.db)), '300ms', 'the request\'s statement')
  const cut = await failure(work.run(() => sql`select pg_sleep(1)`.execute(h.db)))
  t.ok(isCancelledStatement(cut), 'a request\'s statement past the timeout is cancelled (57014)')
  t.equal(await timeoutNow(h.db), '0', 'the same connection, outside the request, is back to the default')
  t.equal(await failure(sql`select pg_sleep(0.5)`.execute(h.db)), undefined, 'background statements are not cut')
  t.equal(await failure(work.run(() => h.db.transaction().execute(async (trx) => {
    await sql`select pg_sleep(0.1)`.execute(trx)
    t.equal(await timeoutNow(trx), '300ms', 'a transaction of the request runs under it too')
  }))), undefined)
  await work.run(() => timeoutNow(h.db))
  t.same(await h.sendStatements!('show statement_timeout; select 1 as one'), [[{ statement_timeout: '0' }], [{ one: 1 }]],
    'one-trip statements (the notifier, timers) outside a request: the default')
  work.finish()
  t.equal(await work.run(() => timeoutNow(h.db)), '0', 'after finish, its context runs as background work')
})

t.test('abandon cancels the running statement and refuses the next until finish', async (t) => {
  const h = await onePool(t)
  const work = h.requestWork({ statementTimeoutMs: 60_000 })
  if (h.kind === 'pglite') {
    work.abandon()
    t.equal(await failure(work.run(() => sql`select 1`.execute(h.db))), undefined, 'PGlite: nothing is refused or cancelled')
    return
  }
  const started = Date.now()
  const running = failure(work.run(() => sql`select pg_sleep(30)`.execute(h.db)))
  await new Promise((r) => setTimeout(r, 300))
  work.abandon()
  const err = await running
  t.ok(isCancelledStatement(err), 'the running statement was cancelled (57014)')
  t.ok(Date.now() - started < 3000, `at once (${Date.now() - started} ms)`)
  t.ok(await failure(work.run(() => sql`select 1`.execute(h.db))) instanceof RequestAbandonedError, 'the next is refused')
  t.equal(await timeoutNow(h.db), '0', 'the pool serves background work at once (the cancelled connection was closed, a new one opened)')
  work.finish()
  t.equal(await failure(work.run(() => sql`select 1`.execute(h.db))), undefined, 'after finish, its context runs again (as background work)')
})
