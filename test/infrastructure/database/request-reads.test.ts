import { sql, type Kysely } from 'kysely'
import t from 'tap'
import { isCancelledStatement, RequestAbandonedError } from '../../../src/infrastructure/database/cancelled-statement.js'
import { openTestDatabase } from '../../helpers/test-database.js'

/**
 * A request's read handles (request-reads.ts): their statements run under the timeout and are
 * cancelled when the signal aborts; the handle's own `db` (what background work holds) never is.
 */
const timeoutNow = async (db: Kysely<any>) => (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)).rows[0]!.statement_timeout
const failure = (p: Promise<unknown>) => p.then(() => undefined, (err: unknown) => err)

t.test('a request\'s reads run under the timeout; the platform\'s handle never does', async (t) => {
  const h = await openTestDatabase(t, { migrate: false })
  const reads = h.requestReads({ statementTimeoutMs: 300 })(new AbortController().signal)
  t.equal(await timeoutNow(reads), '300ms', 'the request\'s reads')
  t.equal(await timeoutNow(h.db), '0', 'the platform\'s handle: the server\'s default')
  const cut = await failure(sql`select pg_sleep(1)`.execute(reads))
  t.ok(isCancelledStatement(cut), 'a read past the timeout is cancelled (57014)')
  t.equal(await failure(sql`select pg_sleep(0.5)`.execute(h.db)), undefined, 'the platform\'s statements are not cut')
  t.same(await h.sendStatements!('show statement_timeout'), [[{ statement_timeout: '0' }]], 'nor one-trip statements')
  const noLimit = h.requestReads({ statementTimeoutMs: 0 })(new AbortController().signal)
  t.equal(await timeoutNow(noLimit), '0', 'a timeout of 0: no limit')
})

t.test('an abort cancels the running read and refuses the next', async (t) => {
  const h = await openTestDatabase(t, { migrate: false })
  const ac = new AbortController()
  const reads = h.requestReads({ statementTimeoutMs: 60_000 })(ac.signal)
  const started = Date.now()
  const running = failure(sql`select pg_sleep(30)`.execute(reads))
  await new Promise((r) => setTimeout(r, 300))
  ac.abort()
  const err = await running
  t.ok(isCancelledStatement(err), 'the running statement was cancelled (57014)')
  t.ok(Date.now() - started < 3000, `at once (${Date.now() - started} ms)`)
  t.ok(await failure(sql`select 1`.execute(reads)) instanceof RequestAbandonedError, 'the next is refused')
  const other = h.requestReads({ statementTimeoutMs: 60_000 })(new AbortController().signal)
  t.equal(await failure(sql`select 1`.execute(other)), undefined, 'another request reads on (the cancelled connection was closed, not pooled)')
  t.equal(await failure(sql`select 1`.execute(h.db)), undefined, 'and the platform\'s handle')
})
