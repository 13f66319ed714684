import { type Kysely, sql } from 'kysely'
import type { EventStore, ReadAllResult } from '../src/infrastructure/event-store/event-store.js'
import { READ_MODEL_SCHEMA } from '../src/infrastructure/database/migrate.js'
import type { Projection } from './projection.js'
import { readModelIn, type ReadModelDatabase } from './read-model-database.js'
import { type ChangeNotice, RoundChanges } from './change-notices.js'
import { noticeSql, type Round, type RoundWriter } from './round-writer.js'
import { TransactionalRounds } from './transactional-rounds.js'
import { OneTripRounds } from './one-trip-rounds.js'
import type { RecordedEvent } from '../src/infrastructure/event-store/event-store.js'
import { linkTo, SpanStatusCode, startSpan, tracingEnabled } from '../src/infrastructure/tracing/tracing.js'

export { projectionLockName } from './round-writer.js'

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
  /**
   * The in-process notice of a round's changes, before its commit (ReadModelChanges.announce). The
   * NOTIFY to every process is sent with the round's writes, with or without it.
   */
  announce?: (n: ChangeNotice) => void
  /** Called after each applied batch (the rebuild's progress bar). */
  onBatch?: (projection: string, events: number, checkpoint: string) => void
}

interface Waiter { position: string; resolve: (ok: boolean) => void; timer: NodeJS.Timeout }

/**
 * Runs projections: single writer per projection through a transaction-scoped advisory lock, the
 * checkpoint moved by compare-and-set in the same transaction as the rows (exactly-once even
 * when two processes race), woken by appends, polling only as a fallback (DESIGN §2).
 */
/** Links kept per round span: a round may carry hundreds of events, a span need not list them all. */
const MAX_ROUND_LINKS = 32

/**
 * A round applies events of many traces at once: its span sits in the first traced event's trace
 * and links the others' (off, or no traced event: none).
 */
function roundSpan(events: RecordedEvent[]) {
  if (!tracingEnabled()) return undefined
  const traced = [...new Set(events.map((e) => e.metadata.traceparent).filter((t): t is string => typeof t === 'string'))]
  if (traced.length === 0) return undefined
  return startSpan('projection round', traced[0], {
    attributes: { 'projection.events': events.length },
    links: traced.slice(1, 1 + MAX_ROUND_LINKS).map(linkTo),
  })
}

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
  /** The first that accepts a round writes it; the last accepts every round. */
  private readonly writers: RoundWriter[]
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
  /** The last round lost a checkpoint to another writer: the next one goes by the transactional writer, which needs no read first. */
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
    const transactional = new TransactionalRounds(db, this.parkedCount, opts.logger)
    this.writers = opts.sendStatements ? [new OneTripRounds(db, opts.sendStatements), transactional] : [transactional]
  }

  private get rm(): Kysely<ReadModelDatabase> {
    return readModelIn(this.db, this.schema)
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
      // Past the newest position any append reported: caught up without reading an empty batch to
      // be sure (a later append wakes the runner again).
      if (!this.behind(await this.store.headPosition())) return false
    }
    return this.behind(await this.store.headPosition())
  }

  private behind(head: string): boolean {
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

  /**
   * One batch of every projection in one round (one commit, not one per projection: the lag),
   * written by the first of the runner's writers that takes it (round-writer.ts): one round trip
   * on PostgreSQL, a transaction otherwise. The checkpoints are read back only when this runner may
   * not know them (first round, after another writer won a compare-and-set, after an error).
   */
  async stepAll(): Promise<boolean> {
    if (this.projections.length === 0) return false
    const names = this.projections.map((p) => p.name)
    let from: Map<string, string>
    if (this.knownIsStored && this.checkpointTable !== undefined && names.every((n) => this.known.has(n))) {
      from = new Map(names.map((n) => [n, this.known.get(n)!]))
    } else {
      from = await this.checkpointsOf(names)
      // The stored checkpoint is the truth, even when lower than what we knew: after a rebuild's
      // swap the fresh tables may stand a little behind the old ones until this round.
      for (const [name, cp] of from) this.advanceKnown(name, cp, true)
    }
    const reads = new Map<string, ReadAllResult>()
    for (const cp of new Set(from.values())) reads.set(cp, await this.readFrom(cp))
    const readOf = (p: Projection) => reads.get(from.get(p.name)!)!
    const due = this.projections.filter((p) => readOf(p).events.length > 0)
    if (due.length === 0) return false
    // Inside a caller's transaction (the rebuild's swap) a failing write must not abort it: savepoints.
    const careful = this.db.isTransaction || this.carefulNext
    this.carefulNext = false
    const changes = new RoundChanges()
    const round: Round = {
      schema: this.schema,
      due,
      from: (p) => from.get(p.name)!,
      to: (p) => readOf(p).checkpoint,
      wanted: (p) => readOf(p).events.filter((e) => p.handles.includes(e.type)),
      ctx: { schema: this.schema, changed: (topic, keys) => changes.add(topic, keys) },
      careful,
      afterLoss: this.lostLast,
      checkpointTable: this.checkpointTable,
      noticeStatement: () => {
        const notice = changes.notice()
        if (!notice) return undefined
        this.opts.announce?.(notice)
        return noticeSql(notice)
      },
    }
    let moved: Projection[]
    const span = roundSpan(due.flatMap((p) => readOf(p).events))
    try {
      moved = await this.writers.find((w) => w.accepts(round))!.write(round)
    } catch (err) {
      span?.setStatus({ code: SpanStatusCode.ERROR })
      // A write failed: the round rolled back whole. The next round, at once, applies the same
      // events with a savepoint per batch, so the failing event is parked and the rest go in.
      this.knownIsStored = false
      if (!careful) { this.carefulNext = true; return true }
      throw err
    } finally {
      span?.end()
    }
    // Another writer moved a checkpoint we skipped: read them back next round (and the table they
    // are in), by the usual path, which needs no read first.
    this.knownIsStored = moved.length === due.length
    this.lostLast = !this.knownIsStored
    if (this.lostLast) this.checkpointTable = undefined
    for (const p of moved) {
      const { events, checkpoint } = readOf(p)
      this.advanceKnown(p.name, checkpoint)
      this.opts.onBatch?.(p.name, events.length, checkpoint)
    }
    return moved.length > 0
  }

  private async checkpointOf(name: string): Promise<string> {
    const row = await this.rm.selectFrom('projection_checkpoints').select('checkpoint').where('name', '=', name).executeTakeFirst()
    if (row) return row.checkpoint
    await this.rm.insertInto('projection_checkpoints')
      .values({ name, checkpoint: this.store.startPosition, updated_at: new Date() })
      .onConflict((oc) => oc.column('name').doNothing()).execute()
    return this.store.startPosition
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

  /** Per-projection checkpoint and lag in events (null when the store cannot count them), for /ready and /metrics. */
  async status(): Promise<{ name: string; checkpoint: string; lag: number | null }[]> {
    // One read of the checkpoints and one count per distinct checkpoint (caught-up projections
    // share the head's): /ready and /metrics ask this often, and ~2 queries a projection took ~0.6 s.
    const rows = await this.rm.selectFrom('projection_checkpoints').select(['name', 'checkpoint']).execute()
    const stored = new Map(rows.map((r) => [r.name, r.checkpoint]))
    const lags = new Map<string, number | null>()
    const out = []
    for (const p of this.projections) {
      const checkpoint = stored.get(p.name) ?? await this.checkpointOf(p.name)
      if (!lags.has(checkpoint)) lags.set(checkpoint, await this.store.eventsAfter(checkpoint))
      out.push({ name: p.name, checkpoint, lag: lags.get(checkpoint)! })
    }
    return out
  }
}
