import { type CompiledQuery, type Kysely, sql, type Transaction } from 'kysely'
import type { Delivery, Handler } from '../infrastructure/bus/bus.js'
import { inlineStatements } from '../infrastructure/database/inline-statements.js'

export type IdempotentHandler<T> = (delivery: Delivery<T>, trx: Transaction<any>) => Promise<void>

/**
 * Handles the new deliveries of one transaction together, in arrival order, e.g. with one
 * set-based statement per table. To refuse one (retry later, dead letter), call its `nak()` or
 * `deadLetter()` and write nothing for it: it is left unmarked and the others commit.
 */
export type IdempotentBatchHandler<T> = (deliveries: Delivery<T>[], trx: Transaction<any>) => Promise<void>

/**
 * A batch handler in two steps: it reads what it needs through `db` and returns its writes instead
 * of running them. `ran` gets each write's rows once they ran (the deliveries resolve after the
 * commit). Refusing a delivery works as for IdempotentBatchHandler: settle it and write nothing for it.
 */
export type IdempotentWritesHandler<T> = (deliveries: Delivery<T>[], db: Kysely<any>) => Promise<BatchWrites>
export interface BatchWrites {
  statements: CompiledQuery[]
  ran?: (rows: unknown[][]) => void
}
/** DatabaseHandle.sendStatements: one string of statements, one round trip, one implicit transaction. */
export type SendStatements = (text: string) => Promise<unknown[][]>

export interface IdempotentOptions {
  /** Name the processed ids are kept under. Default: the consumer's name. */
  scope?: string
  /** Called when a delivery is skipped as already processed (for logs and tests). */
  onDuplicate?: (delivery: Delivery<unknown>) => void
}

const ROLLBACK = Symbol('rollback')

/** Deliveries marked and handled in one transaction at most: bounds how long one batch holds its transaction. */
export const MAX_BATCH = 64

/**
 * Makes a handler's effect happen once per message id: the id goes into bus_processed_messages
 * in the same transaction as the handler's writes, so a redelivered or republished message finds
 * it and is acknowledged without running again; a handler that fails rolls both back.
 *
 * Group commit: while a transaction of this consumer (scope) is in flight, new deliveries queue;
 * the next transaction takes them all (up to MAX_BATCH), marks them with one insert and runs their
 * handlers in arrival order, so a burst costs one BEGIN/insert/COMMIT instead of one per delivery.
 * A delivery alone (low load) or redelivered (attempt > 1: it failed before) takes the
 * one-delivery transaction, as before batching.
 *
 * The handler must write through `trx` only (a write through the outer handle
 * would not be part of the transaction), must not swallow a database error (the transaction would
 * commit nothing, and with it the other deliveries of its batch), and may run more than once for a
 * delivery whose batch was rolled back (only the committed run counts). Effects outside the
 * database (an HTTP call) are not covered; give those their own idempotency key, e.g. the message id.
 */
export function idempotent<T = unknown>(db: Kysely<any>, handle: IdempotentHandler<T>, opts: IdempotentOptions = {}): Handler<T> {
  return groupCommitted(db, { kind: 'each', handle }, opts)
}

/**
 * idempotent() for a handler that takes a transaction's deliveries at once (IdempotentBatchHandler),
 * so that a batch costs its handler one statement per table rather than one per delivery. A
 * refused delivery costs the batch no rollback: only its mark is taken back. A delivery alone or
 * redelivered is a batch of one. The rest of idempotent()'s contract holds: writes through `trx`
 * only, database errors not swallowed; a throw rolls the batch back and each delivery runs alone.
 */
export function idempotentBatch<T = unknown>(db: Kysely<any>, handleMany: IdempotentBatchHandler<T>, opts: IdempotentOptions = {}): Handler<T> {
  return groupCommitted(db, { kind: 'batch', handleMany }, opts)
}

/**
 * idempotentBatch() whose batch holds a transaction id for one round trip instead of three. The
 * marks and the handler's writes go as one string of statements (`send`, PostgreSQL); its reads
 * come before, outside any transaction. There is no look for ids already processed first: the marks'
 * guard catches one, and the batch then goes one by one. Why it matters:
 * readers of the event log wait for every transaction id older than a new event (DESIGN §2,
 * snapshot xmin), so a reaction's open transaction delays projections and the relay. Without
 * `send`, or for a delivery alone after a failed batch, the writes run in a transaction
 * as in idempotentBatch(). A message processed before, or marked meanwhile by another process,
 * fails the string's guard; its deliveries then go one by one, which sees it as a duplicate.
 */
export function idempotentWrites<T = unknown>(
  db: Kysely<any>, send: SendStatements | undefined, plan: IdempotentWritesHandler<T>, opts: IdempotentOptions = {},
): Handler<T> {
  const handleMany: IdempotentBatchHandler<T> = async (deliveries, trx) => {
    const w = await plan(deliveries, trx)
    const rows: unknown[][] = []
    for (const q of w.statements) rows.push((await trx.executeQuery(q)).rows)
    w.ran?.(rows)
  }
  return groupCommitted(db, send ? { kind: 'writes', handleMany, plan, send } : { kind: 'batch', handleMany }, opts)
}

type Handling<T> =
  | { kind: 'each'; handle: IdempotentHandler<T> }
  | { kind: 'batch'; handleMany: IdempotentBatchHandler<T> }
  | { kind: 'writes'; handleMany: IdempotentBatchHandler<T>; plan: IdempotentWritesHandler<T>; send: SendStatements }

function groupCommitted<T>(db: Kysely<any>, handling: Handling<T>, opts: IdempotentOptions): Handler<T> {
  const committers = new Map<string, GroupCommit<T>>()
  return (delivery) => {
    const scope = opts.scope ?? delivery.consumer
    let committer = committers.get(scope)
    if (!committer) committers.set(scope, committer = new GroupCommit(db, handling, scope, opts))
    return committer.submit(delivery)
  }
}

interface Pending<T> {
  delivery: Delivery<T>
  resolve: () => void
  reject: (err: unknown) => void
}

/** One run of a handler, noting whether it settled the delivery itself. */
interface Run<T> { delivery: Delivery<T>; settledOtherwise: boolean }

function track<T>(delivery: Delivery<T>): Run<T> {
  const run: Run<T> = { delivery, settledOtherwise: false }
  // A handler that asks for a retry or a dead letter without throwing must not be marked processed.
  run.delivery = {
    ...delivery,
    nak: (ms) => { run.settledOtherwise = true; delivery.nak(ms) },
    deadLetter: (reason) => { run.settledOtherwise = true; delivery.deadLetter(reason) },
  }
  return run
}

const settle = <T>(p: Pending<T>, work: Promise<void>): Promise<void> => work.then(p.resolve, p.reject)

class GroupCommit<T> {
  private queue: Pending<T>[] = []
  private draining = false

  constructor(
    private readonly db: Kysely<any>,
    private readonly handling: Handling<T>,
    private readonly scope: string,
    private readonly opts: IdempotentOptions,
  ) {}

  submit(delivery: Delivery<T>): Promise<void> {
    // A redelivery failed or was refused before: alone, it cannot send a whole batch down the slow path again.
    if (delivery.attempt > 1) return this.one(delivery)
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ delivery, resolve, reject })
      if (this.draining) return
      this.draining = true
      // A microtask, not a timer: the deliveries a bus hands out in the same tick share the first transaction.
      queueMicrotask(() => { void this.drain() })
    })
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.take()
        // A delivery alone takes the one-delivery transaction, except in one-trip mode, which is cheaper.
        if (batch.length === 1 && this.handling.kind !== 'writes') await settle(batch[0]!, this.one(batch[0]!.delivery))
        else await this.many(batch)
      }
    } finally {
      this.draining = false
    }
  }

  /** The next batch, in arrival order; a second copy of an id waits for the next one (it will be a duplicate then). */
  private take(): Pending<T>[] {
    const batch: Pending<T>[] = []
    const left: Pending<T>[] = []
    const ids = new Set<string>()
    for (const p of this.queue) {
      if (batch.length < MAX_BATCH && !ids.has(p.delivery.id)) {
        batch.push(p)
        ids.add(p.delivery.id)
      } else left.push(p)
    }
    this.queue = left
    return batch
  }

  /** One delivery in its own transaction: the path before batching, and the fallback of a failed batch. */
  private async one(delivery: Delivery<T>): Promise<void> {
    const run = track(delivery)
    try {
      await this.db.transaction().execute(async (trx) => {
        const r = await sql`
          insert into bus_processed_messages (consumer, message_id) values (${this.scope}, ${delivery.id})
          on conflict do nothing`.execute(trx)
        if (Number(r.numAffectedRows ?? 0) === 0) {
          this.opts.onDuplicate?.(delivery)
          return
        }
        if (this.handling.kind === 'each') await this.handling.handle(run.delivery, trx)
        else await this.handling.handleMany([run.delivery], trx)
        if (run.settledOtherwise) throw ROLLBACK
      })
    } catch (err) {
      if (err !== ROLLBACK) throw err
    }
  }

  /** Several deliveries in one transaction; settles every one of them and never throws. */
  private async many(batch: Pending<T>[]): Promise<void> {
    if (this.handling.kind === 'writes') return this.manyInOneTrip(batch, this.handling.plan, this.handling.send)
    if (this.handling.kind === 'batch') return this.manyAtOnce(batch, this.handling.handleMany)
    const handle = this.handling.handle
    let fresh: Pending<T>[] | undefined
    // Set inside the transaction's callback, read in the catch: a property, which flow analysis does not pin to its initial value.
    const running: { current?: { p: Pending<T>; run: Run<T> } | undefined } = {}
    try {
      await this.db.transaction().execute(async (trx) => {
        fresh = await this.mark(batch, trx)
        for (const p of fresh) {
          const run = track(p.delivery)
          running.current = { p, run }
          await handle(run.delivery, trx)
          if (run.settledOtherwise) throw ROLLBACK
        }
        running.current = undefined
      })
    } catch (err) {
      const failed = running.current
      if (err === ROLLBACK && failed) {
        // Rolled back, so not marked processed (its nak or dead letter is already with the bus). The
        // others ran, or would have, after its writes: they go again, first in the queue, without it.
        failed.p.resolve()
        this.queue.unshift(...fresh!.filter((p) => p !== failed.p))
        return
      }
      await this.alone(fresh ?? batch, err, (p) => p === failed?.p && failed.run.settledOtherwise)
      return
    }
    for (const p of fresh!) p.resolve()
  }

  /**
   * many() for idempotentWrites(): plan, then marks and writes in one round trip. No look for
   * processed ids first: a first delivery is almost never a duplicate (a redelivery goes alone, see
   * submit()), so the marks' guard finding one already marked rolls the whole string back, and the
   * batch goes one by one, where each duplicate is found and skipped.
   */
  private async manyInOneTrip(batch: Pending<T>[], plan: IdempotentWritesHandler<T>, send: SendStatements): Promise<void> {
    let runs: Run<T>[] = []
    try {
      runs = batch.map((p) => track(p.delivery))
      const w = await plan(runs.map((r) => r.delivery), this.db)
      // Sorted, so that two processes marking overlapping batches take the row locks in one order.
      const marked = runs.filter((r) => !r.settledOtherwise).map((r) => r.delivery.id).sort()
      // Nothing to write: nothing to do once, so nothing to mark either.
      if (w.statements.length > 0) {
        const mark = sql`
          with m as (
            insert into bus_processed_messages (consumer, message_id)
            select ${this.scope}, id from unnest(${marked}::text[]) as u(id) order by id
            on conflict do nothing
            returning 1)
          select require_row_count(count(*), ${marked.length}::int, 'messages already marked') from m`.compile(this.db)
        const rows = await send(inlineStatements([mark, ...w.statements]))
        w.ran?.(rows.slice(1))
      }
    } catch (err) {
      const settled = new Set(runs.filter((r) => r.settledOtherwise).map((r) => r.delivery.id))
      await this.alone(batch, err, (p) => settled.has(p.delivery.id))
      return
    }
    for (const p of batch) p.resolve()
  }

  /** many() for a batch handler: one call for the batch; a refusal takes back its mark, not the batch. */
  private async manyAtOnce(batch: Pending<T>[], handleMany: IdempotentBatchHandler<T>): Promise<void> {
    let fresh: Pending<T>[] | undefined
    let runs: Run<T>[] = []
    try {
      await this.db.transaction().execute(async (trx) => {
        fresh = await this.mark(batch, trx)
        if (fresh.length === 0) return
        runs = fresh.map((p) => track(p.delivery))
        await handleMany(runs.map((r) => r.delivery), trx)
        const refused = runs.filter((r) => r.settledOtherwise).map((r) => r.delivery.id)
        if (refused.length > 0) {
          await sql`delete from bus_processed_messages where consumer = ${this.scope} and message_id = any(${refused}::text[])`.execute(trx)
        }
      })
    } catch (err) {
      const settled = new Set(runs.filter((r) => r.settledOtherwise).map((r) => r.delivery.id))
      await this.alone(fresh ?? batch, err, (p) => settled.has(p.delivery.id))
      return
    }
    for (const p of fresh!) p.resolve()
  }

  /**
   * Marks a batch processed; returns the deliveries that were not yet (the others are settled here
   * as duplicates). Sorted, so that two processes marking overlapping batches take the row locks in one order.
   */
  private async mark(batch: Pending<T>[], trx: Transaction<any>): Promise<Pending<T>[]> {
    const r = await sql<{ message_id: string }>`
      insert into bus_processed_messages (consumer, message_id)
      select ${this.scope}, id from unnest(${batch.map((p) => p.delivery.id)}::text[]) as u(id) order by id
      on conflict do nothing
      returning message_id`.execute(trx)
    const isNew = new Set(r.rows.map((x) => x.message_id))
    const fresh: Pending<T>[] = []
    for (const p of batch) {
      if (isNew.has(p.delivery.id)) fresh.push(p)
      else {
        // Already processed by a committed transaction (take() keeps one copy of an id per batch).
        this.opts.onDuplicate?.(p.delivery)
        p.resolve()
      }
    }
    return fresh
  }

  /**
   * After a batch failed with an error, which aborts the whole transaction, so which delivery is to
   * blame is unknown: each goes alone, one after another in arrival order (side by side, a later
   * event's writes could commit before an earlier one's). One its handler already settled (nak,
   * dead letter) keeps that settlement.
   */
  private async alone(batch: Pending<T>[], err: unknown, settledAlready: (p: Pending<T>) => boolean): Promise<void> {
    for (const p of batch) {
      if (settledAlready(p)) p.reject(err)
      else await settle(p, this.one(p.delivery))
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
