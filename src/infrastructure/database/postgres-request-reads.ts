import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely'
import type pg from 'pg'
import type { Database } from './database.js'
import { cancelKeyOf, sendCancelRequest } from './cancel-request.js'
import { RequestAbandonedError } from './cancelled-statement.js'
import type { RequestReads } from './request-reads.js'

/**
 * PostgreSQL's request reads (request-reads.ts) over a pool of their own, opened with the statement
 * timeout as a startup option: no `SET` per statement, and no connection a request's limit is on is
 * ever handed to other work. Being apart, requests whose reads are slow fill only this pool, never
 * the main one that writes, authentication and the in-process background use.
 */
export function postgresRequestReads(pool: pg.Pool): RequestReads {
  return (signal) => new Kysely<Database>({ dialect: new PostgresDialect({ pool: new CancellablePool(pool, signal) }) })
}

/**
 * One request's view of the reads pool: a checkout is refused once the request's signal aborted,
 * and an abort sends PostgreSQL's cancel request for each connection the request holds. The cancel
 * goes on a socket of its own (cancel-request.ts), so a pool full of the very statements to cancel
 * cannot hold it up.
 */
class CancellablePool implements PostgresPool {
  constructor(private readonly pool: pg.Pool, private readonly signal: AbortSignal) {}

  async connect(): Promise<PostgresPoolClient> {
    if (this.signal.aborted) throw new RequestAbandonedError()
    const client = await this.pool.connect()
    // Its client may have left while this one waited for a free connection.
    if (this.signal.aborted) {
      client.release()
      throw new RequestAbandonedError()
    }
    let cancelled = false
    const cancel = () => {
      cancelled = true
      const key = cancelKeyOf(client)
      if (key) void sendCancelRequest(key)
    }
    this.signal.addEventListener('abort', cancel, { once: true })
    return {
      query: client.query.bind(client),
      release: () => {
        this.signal.removeEventListener('abort', cancel)
        // The cancel may land after its statement ended: such a connection is closed rather than
        // pooled, lest it cut the next request's statement.
        client.release(cancelled)
      },
    }
  }

  /** The pool is the database handle's: a request's view never ends it. */
  async end(): Promise<void> {}
}
