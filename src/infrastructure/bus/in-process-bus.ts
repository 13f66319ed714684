import type { Database } from '../database/database.js'
import { type Kysely, sql } from 'kysely'
import type { DatabaseHandle } from '../database/connection.js'
import {
  type Bus, BUS_HEADERS, type BusLogger, type BusMessage, type ConsumerOptions, type ConsumerStats, type Handler, headersOf,
  type OutgoingMessage, type PublishResult, type Subscription, silentLogger,
} from './bus.js'
import { countRedeliveries, recordDeadLetter } from './dead-letters.js'
import { type ResolvedConsumerOptions, resolveConsumerOptions, runHandler, type Settlement } from './settlement.js'
import { assertConsumerName, assertPattern, assertSubject, patternsToRegex, subjectMatches } from './subjects.js'
import { settlesWithin, Wakeup } from '../../shared/wakeup.js'
import { type PublishHealth, PublishHealthRecorder } from './publish-health.js'

export interface InProcessBusOptions {
  logger?: BusLogger
  /** Fallback poll when no wake-up arrives. Default 1000 ms. */
  pollMs?: number
  /** Acknowledged messages older than this are deleted from bus_messages. Default 7 days. */
  retentionMs?: number
}

const NOTIFY_CHANNEL = 'bus_published'
// Publishers hold it shared, consumer registration exclusive: a consumer created while a publish is
// in flight either gets that message's delivery row from the publish or from its own backfill.
const REGISTRY_LOCK = sql`hashtextextended('bus:registry', 0)`

interface ClaimedRow {
  seq: number; attempts: number; message_id: string; subject: string; ordering_key: string | null
  data: unknown; headers: unknown; published_at: Date | string
}

const parseJson = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v)
const ms = (n: number) => sql`make_interval(secs => ${n / 1000}::float8)`
const wireHeaders = (m: OutgoingMessage): Record<string, string> =>
  m.onlyFor === undefined ? { ...m.headers } : { ...m.headers, [BUS_HEADERS.onlyFor]: m.onlyFor }

/**
 * The embedded bus: messages and per-consumer delivery rows in the database (the embedded or any
 * PostgreSQL). Deliveries are leased with FOR UPDATE SKIP LOCKED, so several processes sharing a
 * PostgreSQL database compete for one consumer's messages like NATS pull subscribers do.
 */
export class InProcessBus implements Bus {
  readonly kind = 'in-process' as const
  private readonly subscriptions = new Set<InProcessSubscription>()
  private readonly published = new PublishHealthRecorder()
  private readonly logger: BusLogger
  private readonly pollMs: number
  private readonly retentionMs: number
  private unlisten: (() => Promise<void>) | undefined
  private pruneTimer: NodeJS.Timeout | undefined
  /** Rows inserted or deleted since the last ANALYZE: the claim's plan depends on fresh statistics. */
  private changes = 0
  private maintaining = false
  private maintainedAt = 0
  private closed = false

  constructor(private readonly handle: DatabaseHandle, opts: InProcessBusOptions = {}) {
    this.logger = opts.logger ?? silentLogger
    this.pollMs = opts.pollMs ?? 1000
    this.retentionMs = opts.retentionMs ?? 7 * 24 * 3600_000
  }

  get db(): Kysely<Database> { return this.handle.db }

  /** Wakes consumers on publishes made by other processes. */
  async start(): Promise<void> {
    this.unlisten = await this.handle.listen(NOTIFY_CHANNEL, () => { for (const s of this.subscriptions) s.kick() })
    this.pruneTimer = setInterval(() => { this.prune().catch((err) => this.logger.warn({ err }, 'bus prune failed')) }, 600_000)
    this.pruneTimer.unref()
  }

  private noteChanges(n: number): void {
    this.changes += n
    if (this.changes < 1000 || this.maintaining || this.closed || Date.now() - this.maintainedAt < 2000) return
    this.maintaining = true
    this.maintain()
      .catch((err) => this.logger.warn({ err }, 'bus table maintenance failed'))
      .finally(() => { this.maintaining = false; this.maintainedAt = Date.now() })
  }

  /**
   * Keeps the delivery tables' statistics fresh (autovacuum reclaims their dead rows): with stale statistics the claim sorts every pending row instead of
   * walking the primary key, and a backlog of thousands makes each claim tens of milliseconds.
   */
  async maintain(): Promise<void> {
    this.changes = 0
    await sql`analyze bus_deliveries, bus_messages`.execute(this.db)
  }

  publishHealth(): PublishHealth { return this.published.state }

  async publish(input: OutgoingMessage | OutgoingMessage[]): Promise<PublishResult> {
    return this.published.track(this.publishNow(input))
  }

  private async publishNow(input: OutgoingMessage | OutgoingMessage[]): Promise<PublishResult> {
    if (this.closed) throw new Error('bus closed')
    const seen = new Set<string>()
    const messages = (Array.isArray(input) ? input : [input]).filter((m) => !seen.has(m.id) && seen.add(m.id))
    if (messages.length === 0) return { published: 0, duplicates: 0 }
    for (const m of messages) assertSubject(m.subject)
    const published = await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock_shared(${REGISTRY_LOCK})`.execute(trx)
      const r = await sql<{ n: number; d: number }>`
        with input as (
          select * from unnest(
            ${messages.map((m) => m.id)}::text[], ${messages.map((m) => m.subject)}::text[],
            ${messages.map((m) => m.key ?? null)}::text[], ${messages.map((m) => JSON.stringify(m.data ?? null))}::jsonb[],
            ${messages.map((m) => JSON.stringify(wireHeaders(m)))}::jsonb[], ${messages.map((m) => m.onlyFor ?? null)}::text[]
          ) with ordinality as u(message_id, subject, ordering_key, data, headers, only_for, ord)
        ), ins as (
          insert into bus_messages (message_id, subject, ordering_key, data, headers)
          select message_id, subject, ordering_key, data, headers from input order by ord
          on conflict (message_id) do nothing
          returning seq, message_id, subject, ordering_key
        ), fanout as (
          insert into bus_deliveries (consumer, seq, ordering_key)
          select c.name, ins.seq, ins.ordering_key
          from ins join input using (message_id)
          join bus_consumers c on ins.subject ~ c.subject_pattern and (input.only_for is null or input.only_for = c.name)
          returning 1
        )
        select (select count(*) from ins)::int as n, (select count(*) from fanout)::int as d`.execute(trx)
      await sql`select pg_notify(${NOTIFY_CHANNEL}, '')`.execute(trx)
      this.noteChanges(Number(r.rows[0]?.d ?? 0))
      return Number(r.rows[0]?.n ?? 0)
    })
    for (const s of this.subscriptions) {
      if (messages.some((m) => s.matches(m.subject))) s.kick()
    }
    return { published, duplicates: messages.length - published }
  }

  async subscribe<T = unknown>(options: ConsumerOptions, handler: Handler<T>): Promise<Subscription> {
    if (this.closed) throw new Error('bus closed')
    assertConsumerName(options.name)
    options.subjects.forEach(assertPattern)
    const o = resolveConsumerOptions(options)
    await this.register(o)
    const sub = new InProcessSubscription(this.db, o, handler as Handler, this.logger, this.pollMs, () => this.subscriptions.delete(sub), (n) => this.noteChanges(n))
    this.subscriptions.add(sub)
    sub.start()
    return sub
  }

  private async register(o: ResolvedConsumerOptions): Promise<void> {
    const pattern = patternsToRegex(o.subjects)
    await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${REGISTRY_LOCK})`.execute(trx)
      const existing = await sql<{ subject_pattern: string }>`select subject_pattern from bus_consumers where name = ${o.name}`.execute(trx)
      if (existing.rows[0]) {
        if (existing.rows[0].subject_pattern !== pattern) {
          // A changed filter applies to messages published from now on, as on NATS.
          await sql`update bus_consumers set subjects = ${o.subjects}::text[], subject_pattern = ${pattern}, updated_at = now()
                    where name = ${o.name}`.execute(trx)
          this.logger.info({ consumer: o.name, subjects: o.subjects }, 'bus consumer subjects changed')
        }
        return
      }
      await sql`insert into bus_consumers (name, subjects, subject_pattern) values (${o.name}, ${o.subjects}::text[], ${pattern})`.execute(trx)
      if (o.startAt === 'all') {
        await sql`
          insert into bus_deliveries (consumer, seq, ordering_key)
          select ${o.name}, seq, ordering_key from bus_messages
          where subject ~ ${pattern} and not (headers ? ${BUS_HEADERS.onlyFor})
          order by seq`.execute(trx)
      }
    })
  }

  async consumerStats(): Promise<ConsumerStats[]> {
    const r = await sql<{ name: string; pending: number; in_flight: number }>`
      select c.name, count(d.seq)::int as pending,
             (count(d.seq) filter (where d.leased_until > clock_timestamp()))::int as in_flight
      from bus_consumers c left join bus_deliveries d on d.consumer = c.name
      group by c.name order by c.name`.execute(this.db)
    return r.rows.map((x) => ({ name: x.name, pending: Number(x.pending), inFlight: Number(x.in_flight) }))
  }

  async removeConsumer(name: string): Promise<void> {
    for (const s of this.subscriptions) if (s.name === name) await s.stop({ graceMs: 0 })
    await sql`delete from bus_consumers where name = ${name}`.execute(this.db)
  }

  async ping(): Promise<void> {
    await sql`select 1 from bus_consumers limit 1`.execute(this.db)
  }

  /** Deletes acknowledged messages past the retention period. */
  async prune(): Promise<number> {
    const r = await sql`
      delete from bus_messages m
      where m.published_at < clock_timestamp() - ${ms(this.retentionMs)}
        and not exists (select 1 from bus_deliveries d where d.seq = m.seq)`.execute(this.db)
    return Number(r.numAffectedRows ?? 0)
  }

  async close(opts: { graceMs?: number } = {}): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.pruneTimer)
    await Promise.all([...this.subscriptions].map((s) => s.stop(opts)))
    await this.unlisten?.()
  }
}

interface Outcome { row: ClaimedRow; message: BusMessage; s: Settlement }

/**
 * One consumer in this process: claims up to `concurrency` deliveries while handlers run (so a
 * slow handler holds one slot, not the whole consumer), and settles finished ones in batches.
 */
class InProcessSubscription implements Subscription {
  private readonly wakeup = new Wakeup()
  private readonly running = new Map<number, Promise<void>>()
  private readonly finished: Outcome[] = []
  private stopped = false
  /** Set when a stop gave up waiting: late settlements are dropped, as after a crash. */
  private abandoned = false
  private loopDone: Promise<void> = Promise.resolve()
  private heartbeat: NodeJS.Timeout | undefined
  private mayHaveMore = true
  private readonly retryTimers = new Set<NodeJS.Timeout>()

  constructor(
    private readonly db: Kysely<Database>,
    private readonly o: ResolvedConsumerOptions,
    private readonly handler: Handler,
    private readonly logger: BusLogger,
    private readonly pollMs: number,
    private readonly onStop: () => void,
    private readonly onChanges: (n: number) => void,
  ) {}

  get name(): string { return this.o.name }

  matches(subject: string): boolean { return this.o.subjects.some((p) => subjectMatches(p, subject)) }

  /** New messages may be due (a publish, a notification, a delayed redelivery's time). */
  kick(): void {
    this.mayHaveMore = true
    this.wakeup.kick()
  }

  start(): void {
    // A handler that runs longer than the ack wait keeps its lease instead of being redelivered.
    this.heartbeat = setInterval(() => this.renewLeases(), Math.max(10, this.o.ackWaitMs / 2))
    this.heartbeat.unref()
    this.loopDone = this.loop()
  }

  async stop(opts: { graceMs?: number } = {}): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.onStop()
    this.wakeup.kick()
    const graceMs = opts.graceMs ?? 5000
    const finished = await settlesWithin(this.loopDone, graceMs)
    if (!finished) this.abandoned = true
    clearInterval(this.heartbeat)
    for (const timer of this.retryTimers) clearTimeout(timer)
    this.retryTimers.clear()
  }

  private async loop(): Promise<void> {
    let failures = 0
    while (!this.stopped) {
      try {
        const acked = await this.settle()
        // In an ordered consumer an acknowledgement lets the next message of that key through.
        if (this.o.ordered && acked > 0) this.mayHaveMore = true
        const free = this.o.concurrency - this.running.size
        if (free > 0 && this.mayHaveMore) {
          this.mayHaveMore = false
          const rows = await this.claim(free)
          // A full batch may have left more behind; a short one drained what was due.
          if (rows.length === free) this.mayHaveMore = true
          for (const row of rows) this.begin(row)
        }
        failures = 0
        const canClaim = this.mayHaveMore && this.running.size < this.o.concurrency
        if (this.finished.length > 0 || canClaim) continue
        // Until a publish, a finished handler, a delayed redelivery of ours, or the fallback poll
        // (deliveries delayed or leased by other processes).
        if (!(await this.wakeup.sleep(this.pollMs))) this.mayHaveMore = true
      } catch (err) {
        if (this.stopped) break
        failures++
        this.mayHaveMore = true
        this.logger.error({ err, consumer: this.o.name }, 'bus consumer loop failed; retrying')
        await this.wakeup.sleep(Math.min(this.pollMs, 50 * 2 ** Math.min(failures, 6)))
      }
    }
    // Stopping: let running handlers finish and settle them (stop() stops waiting after its grace).
    await Promise.all(this.running.values())
    await this.settle().catch((err) => this.logger.error({ err, consumer: this.o.name }, 'bus settle on stop failed'))
  }

  private begin(row: ClaimedRow): void {
    const message = toMessage(row)
    const run = runHandler(message, row.attempts, this.o, this.handler, this.logger).then((s) => {
      this.running.delete(row.seq)
      this.finished.push({ row, message, s })
      this.wakeup.kick()
    })
    this.running.set(row.seq, run)
  }

  private renewLeases(): void {
    if (this.abandoned) { clearInterval(this.heartbeat); return }
    if (this.running.size === 0) return
    sql`update bus_deliveries set leased_until = clock_timestamp() + ${ms(this.o.ackWaitMs)}
        where consumer = ${this.o.name} and seq = any(${[...this.running.keys()]}::bigint[])`.execute(this.db)
      .catch((err) => this.logger.warn({ err, consumer: this.o.name }, 'bus lease renewal failed'))
  }

  private async claim(limit: number): Promise<ClaimedRow[]> {
    const r = await sql<ClaimedRow>`
      update bus_deliveries d
      set attempts = d.attempts + 1, leased_until = clock_timestamp() + ${ms(this.o.ackWaitMs)}
      from (
        select c.consumer, c.seq from bus_deliveries c
        where c.consumer = ${this.o.name}
          and c.available_at <= clock_timestamp()
          and (c.leased_until is null or c.leased_until <= clock_timestamp())
          ${this.o.ordered ? sql`and not exists (
            select 1 from bus_deliveries p
            where p.consumer = c.consumer and p.ordering_key = c.ordering_key and p.seq < c.seq)` : sql``}
        order by c.seq
        limit ${limit}
        for update skip locked
      ) picked, bus_messages m
      where d.consumer = picked.consumer and d.seq = picked.seq and m.seq = d.seq
      returning d.seq, d.attempts, m.message_id, m.subject, m.ordering_key, m.data, m.headers, m.published_at`.execute(this.db)
    const rows = r.rows.map((x) => ({ ...x, seq: Number(x.seq) })).sort((a, b) => a.seq - b.seq)
    const redelivered = rows.filter((x) => x.attempts > 1).length
    if (redelivered) await countRedeliveries(this.db, this.o.name, redelivered)
    return rows
  }

  /** Carries out the finished handlers' decisions: acks in one statement, naks and dead letters one by one. */
  private async settle(): Promise<number> {
    if (this.abandoned || this.finished.length === 0) return 0
    const outcomes = this.finished.splice(0)
    // Each statement matches the attempt it settles, so a delivery whose lease ran out and was
    // taken by another process is left to that process.
    const acks = outcomes.filter((x) => x.s.kind === 'ack')
    if (acks.length) {
      await sql`
        delete from bus_deliveries d using unnest(${acks.map((a) => a.row.seq)}::bigint[], ${acks.map((a) => a.row.attempts)}::int[]) as a(seq, attempts)
        where d.consumer = ${this.o.name} and d.seq = a.seq and d.attempts = a.attempts`.execute(this.db)
      this.onChanges(acks.length)
    }
    for (const { row, message, s } of outcomes) {
      if (s.kind === 'nak') {
        await sql`
          update bus_deliveries set available_at = clock_timestamp() + ${ms(s.delayMs)}, leased_until = null, last_error = ${s.error ?? null}
          where consumer = ${this.o.name} and seq = ${row.seq} and attempts = ${row.attempts}`.execute(this.db)
        this.retryAt(s.delayMs)
      } else if (s.kind === 'dead') {
        await this.db.transaction().execute(async (trx) => {
          const gone = await sql`
            delete from bus_deliveries where consumer = ${this.o.name} and seq = ${row.seq} and attempts = ${row.attempts}`.execute(trx)
          if (Number(gone.numAffectedRows ?? 0) === 0) return
          await recordDeadLetter(trx, {
            consumer: this.o.name, message, transportRef: String(row.seq), deliveries: Math.min(row.attempts, this.o.maxDeliveries),
            reason: s.reason, error: s.error,
          })
        })
        this.logger.warn({ consumer: this.o.name, message_id: message.id, subject: message.subject, reason: s.reason }, 'bus message dead-lettered')
      }
    }
    return acks.length
  }

  /** Wakes the loop when a delivery this process delayed is due again. */
  private retryAt(delayMs: number): void {
    if (this.stopped) return
    const timer = setTimeout(() => { this.retryTimers.delete(timer); this.kick() }, delayMs + 1)
    timer.unref()
    this.retryTimers.add(timer)
  }
}

function toMessage(row: ClaimedRow): BusMessage {
  const headers = headersOf(row.headers)
  return {
    id: headers[BUS_HEADERS.replayOf] ?? row.message_id,
    subject: row.subject,
    data: parseJson(row.data),
    key: row.ordering_key ?? undefined,
    headers,
    publishedAt: row.published_at instanceof Date ? row.published_at : new Date(row.published_at),
  }
}
