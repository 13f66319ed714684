import type { Kysely } from 'kysely'
import type { Database } from './database.js'

/**
 * The database as one HTTP request reads it (issue 32: nothing runs on after its client gave up).
 * Each statement run through a handle it opens is cut after the statement timeout, and the
 * statements still running when `signal` aborts (the client left) are cancelled; once aborted, the
 * handle refuses further statements.
 *
 * The cut travels with the handle, never with an ambient async context: background work a request
 * happens to start (an append's kicks of the relay, notifier, dispatcher, projections; a shared
 * cache load) holds the platform's own handles and cannot be cut by a request. Only what a handler
 * passes this handle to is the request's.
 */
export type RequestReads = (signal: AbortSignal) => Kysely<Database>

export interface RequestReadsOptions {
  /** Each statement is cancelled by the server after this long; 0: no limit. */
  statementTimeoutMs: number
}
