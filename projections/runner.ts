import { type CompiledQuery, type Kysely, sql } from 'kysely'
import { inlineStatements, REQUIRED_ROW_COUNT_MISSED } from '../src/infrastructure/database/inline-statements.js'
import type { EventStore, ReadAllResult, RecordedEvent } from '../src/infrastructure/event-store/event-store.js'
import { READ_MODEL_SCHEMA } from '../src/infrastructure/database/migrate.js'
import { PostgresEventStore } from '../src/infrastructure/event-store/postgres-event-store.js'
import type { Projection } from './projection.js'
import type { ReadModelDatabase } from './read-model-database.js'

export interface RunnerLogger {
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface RunnerOptions {
  batchSize?: number
  schema?: string
  /** Fallback poll when no wake-up arrives (another process appended and NOTIFY was missed). */
  pollMs?: number
  logger?: RunnerLogger
  /**
   * Sends a string of statements in one round trip as one implicit transaction (PostgreSQL's
   * simple-query protocol). With it, a round of projections that all offer `statements` costs one
   * write round trip instead of four (BEGIN, compare-and-set, writes, COMMIT).
   */
  sendStatements?: (text: string) => Promise<void>
  /** Called after each applied batch (the rebuild's progress bar). */
  onBatch?: (projection: string, events: number, checkpoint: string) => void
}

interface Waiter { position: string; resolve: (ok: boolean) => void; timer: NodeJS.Timeout }

/**
 * The single-writer lock of one projection in one schema. The live schema keeps the plain name, so
 * a rebuild into another schema never contends with the live runner, and the swap can take the
 * live runner's locks by name.
 */
export const projectionLockName = (name: string, schema: string = READ_MODEL_SCHEMA): string =>
  schema === READ_MODEL_SCHEMA ? `projection:${name}` : `projection:${schema}:${name}`
const lockKey = (name: string, schema: string) => sql`hashtextextended(${projectionLockName(name, schema)}, 0)`

/**
 * Runs projections: single writer per projection through a transaction-scoped advisory lock, the
 * checkpoint moved by compare-and-set in the same transaction as the rows (exactly-once even
 * when two processes race), woken by appends, polling only as a fallback (DESIGN §2).
 */
export class ProjectionRunner {
  private readonly known = new Map<string, string>()
  private readonly waiters = new Set<Waiter>()
  /** The slowest projection's checkpoint when the waiters were last checked. */
  private settledUpTo: string | undefined
  private readonly batchSize: number
  private readonly schema: string
  private readonly pollMs: number
  private running = false
  private again = false
  private stopped = true
  /** `known` equals the stored checkpoints: this runner moved them last (see stepAll). */
  private knownIsStored = false
  /** The last fast round failed: apply the next one with savepoints, parking what fails. */
  private carefulNext = false
  /** Set by stop() only: catchUp() also serves runners that were never started (rebuild). */
  private halted = false
  private timer: NodeJS.Timeout | undefined
  private unsubscribe: (() => void) | undefined
  private idle: Promise<void> = Promise.resolve()
  readonly parkedCount = new Map<string, number>()
  /**
   * The last non-empty read, reused by a projection that stands at the same checkpoint. A read is
   * a stable prefix of what follows its checkpoint (every transaction below the snapshot xmin had
   * finished), so reusing it can only give a shorter batch, never a wrong one.
   */
  private lastRead: { from: string; result: ReadAllResult } | undefined
  /** After a full batch, the next one is read while this one is applied (rebuild, catching up). */
  private prefetch: { from: string; result: Promise<ReadAllResult> } | undefined
  /**
   * The checkpoints table the stored checkpoints were read from (its oid). A one-trip round's
   * compare-and-set holds only on that table: after a rebuild swapped fresh tables in, the round,
   * whose reads came before its lock, loses and the checkpoints are read again. Undefined: unknown,
   * and rounds take the usual path (reads under the lock) until the checkpoints are read back.
   */
  private checkpointTable: number | undefined
  /** The last one-trip round lost to another writer: the next one takes the usual path, which needs no read first. */
  private lostLast = false

  constructor(
    private readonly db: Kysely<any>,
    private readonly store: EventStore,
    readonly projections: Projection[],
    private readonly opts: RunnerOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 1000
    this.schema = opts.schema ?? READ_MODEL_SCHEMA
    this.pollMs = opts.pollMs ?? 1000
  }

  private get rm(): Kysely<ReadModelDatabase> {
    return this.db.withSchema(this.schema) as Kysely<ReadModelDatabase>
  }

  /** Started and not stopped: this process projects every append as it commits. */
  get isRunning(): boolean { return !this.stopped }

  async start(): Promise<void> {
    this.stopped = false
    this.halted = false
    this.unsubscribe = this.store.onAppended(() => this.kick())
    this.kick()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.halted = true
    this.unsubscribe?.()
    clearTimeout(this.timer)
    await this.idle
    for (const w of this.waiters) { clearTimeout(w.timer); w.resolve(false) }
    this.waiters.clear()
  }

  /** Ask for a run; coalesces while one is in progress. */
  kick(): void {
    if (this.stopped) return
    if (this.running) { this.again = true; return }
    this.running = true
    this.idle = this.loop()
  }

  private async loop(): Promise<void> {
    clearTimeout(this.timer)
    let retryMs = this.pollMs
    try {
      do {
        this.again = false
        try {
          const pending = await this.catchUp()
          // Events hidden below the snapshot xmin (a concurrent writer still open, usually for a
          // millisecond or two): look again soon, a command is waiting on them.
          retryMs = pending ? 2 : this.pollMs
        } catch (err) {
          this.lastRead = undefined
          this.prefetch = undefined
          this.opts.logger?.error({ err }, 'projection run failed; retrying')
          retryMs = Math.min(this.pollMs, 500)
        }
      } while (this.again && !this.stopped)
    } finally {
      // In the same synchronous step as the last look at `again`: a kick from now on starts a new loop.
      this.running = false
      if (!this.stopped) this.timer = setTimeout(() => this.kick(), retryMs)
    }
  }

  /** Processes every projection until caught up; true when the log head is not yet visible. */
  async catchUp(): Promise<boolean> {
    for (;;) {
      const progressed = await this.stepAll()
      if (this.halted) return false
      if (!progressed) break
    }
    const head = await this.store.headPosition()
    return this.projections.some((p) => this.store.comparePositions(this.known.get(p.name) ?? this.store.startPosition, head) < 0)
  }

  /** Checkpoints of every projection in one query (rows created at the start for new projections). */
  private async checkpointsOf(names: string[]): Promise<Map<string, string>> {
    const rows = await this.rm.selectFrom('projection_checkpoints')
      .select(['name', 'checkpoint', sql<number>`tableoid::int`.as('oid')]).where('name', 'in', names).execute()
    this.checkpointTable = rows.length === names.length ? Number(rows[0]!.oid) : undefined
    const out = new Map(rows.map((r) => [r.name, r.checkpoint]))
    for (const name of names) if (!out.has(name)) out.set(name, await this.checkpointOf(name))
    return out
  }

  /** Reads after `from`, reusing the round's read or the prefetched one when they start there. */
  private async readFrom(from: string): Promise<ReadAllResult> {
    if (this.lastRead?.from === from) return this.lastRead.result
    const prefetched = this.prefetch?.from === from ? this.prefetch.result : undefined
    if (prefetched) this.prefetch = undefined
    const read = await (prefetched ?? this.store.readAll(from, this.batchSize))
    if (read.events.length === this.batchSize && !this.db.isTransaction) {
      const result = this.store.readAll(read.checkpoint, this.batchSize)
      result.catch(() => { /* surfaces when the next step awaits it */ })
      this.prefetch = { from: read.checkpoint, result }
    }
    if (read.events.length > 0) this.lastRead = { from, result: read }
    return read
  }

  /** A runner built on a transaction (the rebuild's swap) works inside it; savepoints keep batches apart. */
  private inTransaction<T>(fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? fn(this.db) : this.db.transaction().execute(fn)
  }

  /**
   * One batch of every projection in ONE transaction (one commit per round, not one per
   * projection: the lag). Each projection still has its own lock and compare-and-set checkpoint;
   * one whose lock another process holds, or whose checkpoint moved meanwhile, sits the round out.
   * Round trips are the lag under load, so the round is: read, BEGIN, lock + compare-and-set in one
   * statement, the projections' writes, COMMIT. The checkpoints are read back only when this runner
   * may not know them (first round, after another writer won a compare-and-set, after an error).
   */
  async stepAll(): Promise<boolean> {
    if (this.projections.length === 0) return false
    const names = this.projections.map((p) => p.name)
    let from: Map<string, string>
    // One-trip rounds need the checkpoints table's identity, which a read of the checkpoints gives.
    const tableKnown = this.checkpointTable !== undefined || !this.opts.sendStatements
    if (this.knownIsStored && tableKnown && names.every((n) => this.known.has(n))) {
      from = new Map(names.map((n) => [n, this.known.get(n)!]))
    } else {
      from = await this.checkpointsOf(names)
      // The stored checkpoint is the truth, even when lower than what we knew: after a rebuild's
      // swap the fresh tables may stand a little behind the old ones until this round.
      for (const [name, cp] of from) this.advanceKnown(name, cp, true)
    }
    const reads = new Map<string, ReadAllResult>()
    for (const cp of new Set(from.values())) reads.set(cp, await this.readFrom(cp))
    const due = this.projections.filter((p) => reads.get(from.get(p.name)!)!.events.length > 0)
    if (due.length === 0) return false
    // Inside a caller's transaction (the rebuild's swap) a failing write must not abort it: savepoints.
    const careful = this.db.isTransaction || this.carefulNext
    this.carefulNext = false
    const wantedOf = (p: Projection) => reads.get(from.get(p.name)!)!.events.filter((e) => p.handles.includes(e.type))
    const table = this.checkpointTable
    if (!careful && !this.lostLast && table !== undefined && this.opts.sendStatements && due.every((p) => p.statements || wantedOf(p).length === 0)) {
      return this.oneTripRound(due, from, reads, wantedOf, this.opts.sendStatements, table)
    }
    let moved: Projection[]
    try {
      moved = await this.inTransaction(async (trx) => {
        // Read models are rebuilt from the log and the checkpoint commits with the rows, so a crash that
        // loses the last projection commits only replays them: no need to wait for the WAL flush (lag).
        const cas = await sql<{ name: string }>`
          with cfg as materialized (select ${this.db.isTransaction ? sql`1` : sql`set_config('synchronous_commit', 'off', true)`} as v)
          update ${sql.id(this.schema, 'projection_checkpoints')} c set checkpoint = v.next, updated_at = now()
          from unnest(${due.map((p) => p.name)}::text[], ${due.map((p) => projectionLockName(p.name, this.schema))}::text[],
                      ${due.map((p) => from.get(p.name)!)}::text[], ${due.map((p) => reads.get(from.get(p.name)!)!.checkpoint)}::text[])
               as v(name, lock, prev, next), cfg
          where c.name = v.name and c.checkpoint = v.prev and pg_try_advisory_xact_lock(hashtextextended(v.lock, 0))
          returning c.name`.execute(trx)
        const won = due.filter((p) => cas.rows.some((r) => r.name === p.name))
        const rm = trx.withSchema(this.schema) as Kysely<ReadModelDatabase>
        for (const p of won) {
          const wanted = wantedOf(p)
          if (!wanted.length) continue
          if (careful) await this.applySafely(trx, rm, p, wanted)
          else await p.apply(rm, wanted, { schema: this.schema })
        }
        return won
      })
    } catch (err) {
      // A projection failed on the fast path: the round rolled back whole. The next round applies the
      // same events with a savepoint per batch, so the failing event is parked and the rest go in.
      this.knownIsStored = false
      if (!careful) { this.carefulNext = true; return true }
      throw err
    }
    // Another writer moved a checkpoint we skipped: read them back next round.
    this.knownIsStored = moved.length === due.length
    this.lostLast = !this.knownIsStored
    for (const p of moved) {
      const { events, checkpoint } = reads.get(from.get(p.name)!)!
      this.advanceKnown(p.name, checkpoint)
      this.opts.onBatch?.(p.name, events.length, checkpoint)
    }
    return moved.length > 0
  }

  /**
   * The round as one string of statements: the compare-and-set of every due checkpoint (which must
   * win them all, or the round raises and rolls back), then each projection's writes. One write
   * round trip. A lost compare-and-set or a failing write sends the next round down the usual path,
   * which reads the checkpoints back and applies with savepoints.
   */
  private async oneTripRound(
    due: Projection[], from: Map<string, string>, reads: Map<string, ReadAllResult>,
    wantedOf: (p: Projection) => RecordedEvent[], send: (text: string) => Promise<void>, table: number,
  ): Promise<boolean> {
    const ctx = { schema: this.schema }
    const writes: CompiledQuery[] = []
    try {
      for (const p of due) {
        const wanted = wantedOf(p)
        if (wanted.length) writes.push(...await p.statements!(this.rm, wanted, ctx))
      }
      const cas = sql`
        with cfg as materialized (select set_config('synchronous_commit', 'off', true) as v),
        won as (
          update ${sql.id(this.schema, 'projection_checkpoints')} c set checkpoint = v.next, updated_at = now()
          from unnest(${due.map((p) => p.name)}::text[], ${due.map((p) => projectionLockName(p.name, this.schema))}::text[],
                      ${due.map((p) => from.get(p.name)!)}::text[], ${due.map((p) => reads.get(from.get(p.name)!)!.checkpoint)}::text[])
               as v(name, lock, prev, next), cfg
          where c.name = v.name and c.checkpoint = v.prev and c.tableoid = ${table}::oid
            and pg_try_advisory_xact_lock(hashtextextended(v.lock, 0))
          returning 1)
        select require_row_count(count(*), ${due.length}::int, 'projection checkpoints moved') from won`.compile(this.db)
      await send(inlineStatements([cas, ...writes]))
    } catch (err) {
      this.knownIsStored = false
      // Lost to another writer (it moved a checkpoint or holds a lock): no progress, as on the usual
      // path; catchUp compares the head, and the next round reads the checkpoints back.
      if ((err as { code?: string })?.code === REQUIRED_ROW_COUNT_MISSED) { this.lostLast = true; this.checkpointTable = undefined; return false }
      // A write failed: the next round, at once, applies with savepoints and parks what fails.
      this.carefulNext = true
      return true
    }
    for (const p of due) {
      const { events, checkpoint } = reads.get(from.get(p.name)!)!
      this.advanceKnown(p.name, checkpoint)
      this.opts.onBatch?.(p.name, events.length, checkpoint)
    }
    this.knownIsStored = true
    return true
  }

  private async checkpointOf(name: string): Promise<string> {
    const row = await this.rm.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', name).executeTakeFirst()
    if (row) return row.checkpoint
    await this.rm.insertInto('projection_checkpoints')
      .values({ name, checkpoint: this.store.startPosition, updated_at: new Date() })
      .onConflict((oc) => oc.column('name').doNothing()).execute()
    return this.store.startPosition
  }

  /** One batch of one projection in its own transaction. Returns true when it moved the checkpoint. */
  async step(p: Projection): Promise<boolean> {
    const from = await this.checkpointOf(p.name)
    this.advanceKnown(p.name, from)
    const { events, checkpoint } = await this.readFrom(from)
    if (events.length === 0) return false
    const wanted = events.filter((e) => p.handles.includes(e.type))
    const moved = await this.inTransaction(async (trx) => {
      // Read models are rebuilt from the log and the checkpoint commits with the rows, so a crash that
      // loses the last projection commits only replays them: no need to wait for the WAL flush (lag).
      const locked = await sql<{ ok: boolean }>`
        select pg_try_advisory_xact_lock(${lockKey(p.name, this.schema)}) as ok
        ${this.db.isTransaction ? sql`` : sql`, set_config('synchronous_commit', 'off', true)`}`.execute(trx)
      if (!locked.rows[0]?.ok) return false
      const rm = trx.withSchema(this.schema) as Kysely<ReadModelDatabase>
      const cas = await rm.updateTable('projection_checkpoints')
        .set({ checkpoint, updated_at: new Date() })
        .where('name', '=', p.name).where('checkpoint', '=', from)
        .executeTakeFirst()
      if (Number(cas.numUpdatedRows) !== 1) return false
      if (wanted.length) await this.applySafely(trx, rm, p, wanted)
      return true
    })
    if (moved) {
      this.advanceKnown(p.name, checkpoint)
      this.opts.onBatch?.(p.name, events.length, checkpoint)
    }
    return moved
  }

  /** A batch that fails is retried event by event; an event that still fails is parked, not retried forever. */
  private async applySafely(trx: Kysely<any>, rm: Kysely<ReadModelDatabase>, p: Projection, events: RecordedEvent[]): Promise<void> {
    const ctx = { schema: this.schema }
    await sql`savepoint batch`.execute(trx)
    try {
      await p.apply(rm, events, ctx)
      await sql`release savepoint batch`.execute(trx)
      return
    } catch {
      await sql`rollback to savepoint batch`.execute(trx)
    }
    for (const e of events) {
      await sql`savepoint one`.execute(trx)
      try {
        await p.apply(rm, [e], ctx)
        await sql`release savepoint one`.execute(trx)
      } catch (err) {
        await sql`rollback to savepoint one`.execute(trx)
        this.parkedCount.set(p.name, (this.parkedCount.get(p.name) ?? 0) + 1)
        this.opts.logger?.warn({ err, event_id: e.id, type: e.type, projection: p.name }, 'event parked by projection')
        await rm.insertInto('projection_parked' as any).values({
          projection: p.name, event_id: e.id, position: e.position, error: String((err as Error)?.message ?? err).slice(0, 2000),
        }).onConflict((oc: any) => oc.doNothing()).execute()
      }
    }
  }

  private advanceKnown(name: string, checkpoint: string, stored = false): void {
    const prev = this.known.get(name)
    if (stored || prev === undefined || this.store.comparePositions(checkpoint, prev) > 0) this.known.set(name, checkpoint)
    // A stored checkpoint may be behind what was known (a rebuild swapped the tables): check afresh.
    if (stored) this.settledUpTo = undefined
    if (this.waiters.size === 0) return
    // The waiters are checked against the slowest projection, and only when that moved: a round
    // advances every projection in turn, and under load dozens of requests wait on each round.
    const slowest = this.slowestKnown()
    if (slowest === undefined || slowest === this.settledUpTo) return
    this.settledUpTo = slowest
    for (const w of this.waiters) {
      if (this.store.comparePositions(slowest, w.position) >= 0) { clearTimeout(w.timer); this.waiters.delete(w); w.resolve(true) }
    }
  }

  /** The least checkpoint known among the projections; undefined while one of them is unknown. */
  private slowestKnown(): string | undefined {
    let slowest: string | undefined
    for (const p of this.projections) {
      const k = this.known.get(p.name)
      if (k === undefined) return undefined
      if (slowest === undefined || this.store.comparePositions(k, slowest) < 0) slowest = k
    }
    return slowest
  }

  private passed(position: string): boolean {
    const slowest = this.slowestKnown()
    return slowest !== undefined && this.store.comparePositions(slowest, position) >= 0
  }

  /** Read-your-writes: resolves true once every projection has passed `position`, false on time-out. */
  waitFor(position: string, timeoutMs: number): Promise<boolean> {
    if (this.passed(position)) return Promise.resolve(true)
    return new Promise((resolve) => {
      const w: Waiter = {
        position,
        resolve,
        timer: setTimeout(() => { this.waiters.delete(w); resolve(false) }, timeoutMs),
      }
      this.waiters.add(w)
      this.kick()
    })
  }

  /**
   * Per-projection checkpoint and lag in events, for /ready and /metrics. The count needs the
   * PostgreSQL log; on another store the lag is 0 when caught up and null (unknown) otherwise.
   */
  async status(): Promise<{ name: string; checkpoint: string; lag: number | null }[]> {
    const out = []
    const head = this.store instanceof PostgresEventStore ? undefined : await this.store.headPosition()
    for (const p of this.projections) {
      const checkpoint = await this.checkpointOf(p.name)
      if (head !== undefined) {
        out.push({ name: p.name, checkpoint, lag: this.store.comparePositions(checkpoint, head) >= 0 ? 0 : null })
        continue
      }
      const [tx, pos] = checkpoint.split('/')
      const r = await sql<{ n: number }>`
        select count(*)::int as n from es_events
        where (transaction_id, global_position) > (${tx}::xid8, ${pos}::bigint)`.execute(this.db)
      out.push({ name: p.name, checkpoint, lag: Number(r.rows[0]?.n ?? 0) })
    }
    return out
  }
}
