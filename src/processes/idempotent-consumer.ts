import { type Kysely, sql, type Transaction } from 'kysely'
import type { Delivery, Handler } from '../infrastructure/bus/bus.js'

export type IdempotentHandler<T> = (delivery: Delivery<T>, trx: Transaction<any>) => Promise<void>

export interface IdempotentOptions {
  /** Name the processed ids are kept under. Default: the consumer's name. */
  scope?: string
  /** Called when a delivery is skipped as already processed (for logs and tests). */
  onDuplicate?: (delivery: Delivery<unknown>) => void
}

const ROLLBACK = Symbol('rollback')

/**
 * Makes a handler's effect happen once per message id: the id goes into bus_processed_messages
 * in the same transaction as the handler's writes, so a redelivered or republished message finds
 * it and is acknowledged without running again; a handler that fails rolls both back.
 *
 * The handler must write through `trx` only (PGlite has one connection: using the outer handle
 * inside the transaction waits forever). Effects outside the database (an HTTP call) are not
 * covered; give those their own idempotency key, e.g. the message id.
 */
export function idempotent<T = unknown>(db: Kysely<any>, handle: IdempotentHandler<T>, opts: IdempotentOptions = {}): Handler<T> {
  return async (delivery) => {
    const scope = opts.scope ?? delivery.consumer
    let settledOtherwise = false
    // A handler that asks for a retry or a dead letter without throwing must not be marked processed.
    const tracked: Delivery<T> = {
      ...delivery,
      nak: (ms) => { settledOtherwise = true; delivery.nak(ms) },
      deadLetter: (reason) => { settledOtherwise = true; delivery.deadLetter(reason) },
    }
    try {
      await db.transaction().execute(async (trx) => {
        const r = await sql`
          insert into bus_processed_messages (consumer, message_id) values (${scope}, ${delivery.id})
          on conflict do nothing`.execute(trx)
        if (Number(r.numAffectedRows ?? 0) === 0) {
          opts.onDuplicate?.(delivery as Delivery<unknown>)
          return
        }
        await handle(tracked, trx)
        if (settledOtherwise) throw ROLLBACK
      })
    } catch (err) {
      if (err !== ROLLBACK) throw err
    }
  }
}

export async function wasProcessed(db: Kysely<any>, scope: string, messageId: string): Promise<boolean> {
  const r = await sql`select 1 from bus_processed_messages where consumer = ${scope} and message_id = ${messageId}`.execute(db)
  return r.rows.length > 0
}

/**
 * Forgets processed ids older than `olderThanMs`. Duplicates are caught only within the retention,
 * so keep it longer than any redelivery can take (the longest retry schedule plus the bus retention).
 */
export async function pruneProcessedMessages(db: Kysely<any>, olderThanMs: number): Promise<number> {
  const r = await sql`
    delete from bus_processed_messages
    where processed_at < clock_timestamp() - make_interval(secs => ${olderThanMs / 1000}::float8)`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
