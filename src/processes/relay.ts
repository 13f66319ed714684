import type { Database } from '../infrastructure/database/database.js'
import { randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { Bus, BusLogger, BusMessage, OutgoingMessage } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import { eventSubject } from '../shared/event-subjects.js'
import { Wakeup } from '../shared/wakeup.js'
import { runStepLoop } from '../shared/step-loop.js'
import { FailureRun } from '../shared/failure-run.js'
import { type EventStore, type RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Span } from '@opentelemetry/api'
import { SpanKind, startSpan, traceparentOfSpan, tracingEnabled } from '../infrastructure/tracing/tracing.js'

/** The wait after the n-th failed batch in a row: 200 ms, 400 ms, then every half second. */
export const relayBackoffMs = (failures: number): number => Math.min(500, 100 * 2 ** Math.min(failures, 3))

/** The subject of an event, spelled with the families consumers subscribe by (shared/event-subjects.ts). */
export { eventSubject }

/** The message the relay publishes for an event: the whole recorded event, keyed by its stream. */
export const eventMessage = (e: RecordedEvent): OutgoingMessage<RecordedEvent> => ({
  subject: eventSubject(e), id: e.id, key: e.streamId, data: e,
})

/**
 * The relay's messages of a batch; a traced event gets a publish span in its trace, whose
 * traceparent travels in the message's header (consumers continue from it).
 */
function publishing(events: RecordedEvent[]): { messages: OutgoingMessage<RecordedEvent>[]; end(): void } {
  if (!tracingEnabled()) return { messages: events.map(eventMessage), end() {} }
  const spans: Span[] = []
  const messages = events.map((e) => {
    const span = startSpan(`relay publish ${eventSubject(e)}`, e.metadata.traceparent, { kind: SpanKind.PRODUCER })
    if (!span) return eventMessage(e)
    spans.push(span)
    return { ...eventMessage(e), headers: { traceparent: traceparentOfSpan(span)! } }
  })
  return { messages, end: () => { for (const s of spans) s.end() } }
}

/** The recorded event inside a relayed message (dates revived). */
export function eventOf(message: BusMessage): RecordedEvent {
  const e = message.data as RecordedEvent & { recordedAt: string | Date }
  return { ...e, recordedAt: new Date(e.recordedAt) }
}

export interface RelayOptions {
  /** Checkpoint and lease name; one active relay per name across processes. Default `main`. */
  name?: string
  batchSize?: number
  /** Fallback poll when no append wake-up arrives. Default 1000 ms. */
  pollMs?: number
  /**
   * A relay that stops renewing its lease (crashed) is replaced after this long. Default 2 s: the
   * leader renews it every third of that, a standby tries for it as often, so events reach the bus
   * again within about 2.7 s of a kill -9; the checkpoint's compare-and-set on the owner fences a
   * leader that stalled past its lease.
   */
  leaseMs?: number
  logger?: BusLogger
}

export interface RelayStatus {
  name: string
  checkpoint: string
  /** Events in the log after the checkpoint. */
  lag: number
  owner: string | undefined
  leaseUntil: Date | undefined
  /** True when this instance holds the lease. */
  active: boolean
  /** Some process holds an unexpired lease (by the database's clock). */
  live: boolean
}

/**
 * Publishes every event of the log on the bus, in commit order, from a checkpoint. One relay is
 * active per name: it holds a lease row (renewed with each batch, taken over once it lapses), and
 * moves the checkpoint by compare-and-set after the bus has acknowledged the batch. A relay that
 * dies between the two republishes that batch; the message id is the event id, so the bus drops
 * the copies (NATS within its duplicate window, the in-process bus always) and idempotent
 * consumers absorb any that get through.
 */
export class Relay {
  readonly name: string
  readonly owner = randomUUID()
  private readonly batchSize: number
  private readonly pollMs: number
  private readonly leaseMs: number
  private readonly logger: BusLogger
  private readonly wakeup = new Wakeup()
  /** Kicked by stop alone: ends a backoff early. */
  private readonly stopSignal = new Wakeup()
  private readonly outage: FailureRun
  private stopped = true
  private leader = false
  /** While leader: the checkpoint this relay last wrote and when its lease was last extended. */
  private checkpoint: string | undefined
  private renewedAt = 0
  private loopDone: Promise<void> = Promise.resolve()
  private unsubscribe: (() => void) | undefined

  constructor(private readonly db: Kysely<Database>, private readonly store: EventStore, private readonly bus: Bus, opts: RelayOptions = {}) {
    this.name = opts.name ?? 'main'
    this.batchSize = opts.batchSize ?? 500
    this.pollMs = opts.pollMs ?? 1000
    this.leaseMs = opts.leaseMs ?? 2_000
    this.logger = opts.logger ?? silentLogger
    this.outage = new FailureRun(this.logger, { relay: this.name }, 'relay batch failed; retrying', 'relay publishing again')
  }

  get isActive(): boolean { return this.leader }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.unsubscribe = this.store.onAppended(() => this.wakeup.kick())
    this.loopDone = this.loop()
  }

  /** Stops after the batch in flight; gives the lease up so another relay takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.unsubscribe?.()
    this.wakeup.kick()
    this.stopSignal.kick()
    await this.loopDone
    if (this.leader) {
      await sql`update bus_relay_checkpoints set owner = null, lease_until = null where name = ${this.name} and owner = ${this.owner}`
        .execute(this.db).catch(() => undefined)
      this.leader = false
      this.checkpoint = undefined
    }
  }

  private loop(): Promise<void> {
    return runStepLoop({
      stopped: () => this.stopped,
      step: async () => {
        const outcome = await this.step()
        this.outage.ended()
        return outcome
      },
      // Standby: try for the lease a few times per lease period; hidden: look again very soon.
      rest: (next) => this.wakeup.sleep(next === 'hidden' ? 10 : Math.min(this.pollMs, this.leaseMs / 3)),
      failed: (err) => {
        // The next round takes (or renews) its lease again rather than trusting a checkpoint that
        // another relay may have moved while this one could not reach the database.
        this.checkpoint = undefined
        this.outage.failed(err)
      },
      wakeup: this.wakeup,
      // A lost NATS node fails publishes for the seconds its stream elects a leader: retried
      // twice a second so that events flow within half a second of it, whatever new appends do
      // (they do not cut the wait short: under load that was a failed publish per append).
      backoff: relayBackoffMs,
      backoffWakeup: this.stopSignal,
    })
  }

  /**
   * One batch: take or renew the lease, read after the checkpoint, publish, move the checkpoint.
   * `more`: a full batch went out; `idle`: caught up; `hidden`: newer events exist but are not yet
   * readable (an older transaction is still open); `standby`: another relay holds the lease.
   */
  async step(): Promise<'more' | 'idle' | 'hidden' | 'standby'> {
    // Every checkpoint write extends the lease, so a busy leader skips the separate renewal.
    const fresh = this.leader && this.checkpoint !== undefined && Date.now() - this.renewedAt < this.leaseMs / 3
    const from = fresh ? this.checkpoint! : await this.acquire()
    if (from === undefined) return 'standby'
    const { events, checkpoint } = await this.store.readAll(from, this.batchSize)
    if (events.length === 0) {
      const head = await this.store.headPosition()
      return this.store.comparePositions(head, from) > 0 ? 'hidden' : 'idle'
    }
    const batch = publishing(events)
    try {
      await this.bus.publish(batch.messages)
    } finally {
      batch.end()
    }
    const moved = await sql`
      update bus_relay_checkpoints
      set checkpoint = ${checkpoint}, lease_until = clock_timestamp() + make_interval(secs => ${this.leaseMs / 1000}::float8), updated_at = now()
      where name = ${this.name} and owner = ${this.owner} and checkpoint = ${from}`.execute(this.db)
    if (Number(moved.numAffectedRows ?? 0) !== 1) {
      this.leader = false
      this.checkpoint = undefined
      this.logger.warn({ relay: this.name }, 'relay lost its lease during a batch; the batch is republished by the new owner')
      return 'standby'
    }
    this.checkpoint = checkpoint
    this.renewedAt = Date.now()
    return events.length === this.batchSize ? 'more' : 'idle'
  }

  /** Takes the lease if free or lapsed, renews it if ours; returns the checkpoint, or undefined if another relay holds it. */
  private async acquire(): Promise<string | undefined> {
    const r = await sql<{ checkpoint: string }>`
      insert into bus_relay_checkpoints (name, checkpoint, owner, lease_until)
      values (${this.name}, ${this.store.startPosition}, ${this.owner}, clock_timestamp() + make_interval(secs => ${this.leaseMs / 1000}::float8))
      on conflict (name) do update
        set owner = excluded.owner, lease_until = excluded.lease_until, updated_at = now()
        where bus_relay_checkpoints.owner = excluded.owner
           or bus_relay_checkpoints.owner is null
           or bus_relay_checkpoints.lease_until < clock_timestamp()
      returning checkpoint`.execute(this.db)
    const row = r.rows[0]
    if (!row) {
      if (this.leader) this.logger.warn({ relay: this.name }, 'relay lease taken by another process')
      this.leader = false
      this.checkpoint = undefined
      return undefined
    }
    if (!this.leader) this.logger.info({ relay: this.name, owner: this.owner }, 'relay active')
    this.leader = true
    this.checkpoint = row.checkpoint
    this.renewedAt = Date.now()
    return row.checkpoint
  }

  async status(): Promise<RelayStatus> {
    return relayStatus(this.db, this.name, this.owner)
  }
}

/** Checkpoint, lag and lease of a relay by name (any process may ask). */
export async function relayStatus(db: Kysely<Database>, name = 'main', self?: string): Promise<RelayStatus> {
  const r = await sql<{ checkpoint: string; owner: string | null; lease_until: Date | string | null; live: boolean }>`
    select checkpoint, owner, lease_until, coalesce(lease_until > clock_timestamp(), false) as live
    from bus_relay_checkpoints where name = ${name}`.execute(db)
  const row = r.rows[0]
  const checkpoint = row?.checkpoint ?? '0/0'
  return {
    name,
    checkpoint,
    lag: await eventsAfter(db, checkpoint),
    owner: row?.owner ?? undefined,
    leaseUntil: row?.lease_until ? new Date(row.lease_until) : undefined,
    active: self !== undefined && row?.owner === self && Boolean(row?.live),
    live: Boolean(row?.owner) && Boolean(row?.live),
  }
}

/** Events of the PostgreSQL event store after a checkpoint; -1 for another store's position. */
export async function eventsAfter(db: Kysely<Database>, checkpoint: string): Promise<number> {
  const m = /^(\d+)\/(\d+)$/.exec(checkpoint)
  if (!m) return -1
  const r = await sql<{ n: number }>`
    select count(*)::int as n from es_events
    where (transaction_id, global_position) > (${m[1]}::xid8, ${m[2]}::bigint)`.execute(db)
  return Number(r.rows[0]?.n ?? 0)
}
