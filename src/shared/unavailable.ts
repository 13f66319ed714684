import { errnoOf, messageOf } from './thrown.js'

/**
 * SQLSTATEs of a server that is not there for now: class 08 (connection exception), 57P01
 * (terminated by an administrator: `pg_ctl stop -m fast`), 57P02 (crash shutdown), 57P03 (cannot
 * connect now: starting up, shutting down, in recovery), 53300 (too many connections).
 */
const SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/

/** Socket errors of a server that went away or does not listen (yet). */
const ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])

/** node-postgres and pg-pool say these in words only (no code). */
const MESSAGES = [
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
]

/**
 * The database cannot be reached for now (restarting, crashed, a dropped connection, no free
 * connection within the connect timeout), as opposed to a statement it refused. Such a failure is
 * worth retrying as it is: a request answers 503 with Retry-After, a background loop retries soon.
 * Looks through `cause` (pg-pool wraps its timeout, Kysely may wrap too).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const code = errnoOf(e)
    if (code !== undefined && (SQLSTATE.test(code) || ERRNO.has(code))) return true
    const message = messageOf(e)
    if (MESSAGES.some((m) => message.startsWith(m))) return true
    e = typeof e === 'object' && 'cause' in e ? e.cause : undefined
  }
  return false
}
