import type { Database } from '../infrastructure/database/database.js'
import type { BusTimersTable } from '../infrastructure/database/platform-tables.js'
import { type CompiledQuery, type Kysely, type Selectable, sql } from 'kysely'
import type { Bus, BusLogger } from '../infrastructure/bus/bus.js'
import { headersOf, silentLogger } from '../infrastructure/bus/bus.js'
import { assertSubject } from '../infrastructure/bus/subjects.js'
import { Wakeup } from '../shared/wakeup.js'
import { messageOf } from '../shared/thrown.js'

export interface TimerSpec {
  /** Caller-chosen identity, e.g. `expire-shipment-42`; scheduling it again moves it. */
  id: string
  fireAt: Date
  /** Published when due, e.g. `commands.shipment.expire`. */
  subject: string
  data: unknown
  key?: string
  headers?: Record<string, string>
}

/** One step of Timers.change(). */
export type TimerChange = { schedule: TimerSpec } | { cancel: string }

export interface Timer extends TimerSpec {
  generation: number
  state: 'scheduled' | 'fired' | 'cancelled'
  attempts: number
  lastError: string | undefined
  firedAt: Date | undefined
}

export interface TimerStatus {
  scheduled: number
  /** Scheduled timers whose time has passed and that have not been published yet. */
  overdue: number
  oldestOverdueMs: number
}

export interface TimersOptions {
  /** Fallback poll for timers scheduled by other processes. Default 1000 ms. */
  pollMs?: number
  batchSize?: number
  /** A firing process that dies mid-publish leaves the timer to be fired again after this. Default 3 s (a firing takes milliseconds). */
  leaseMs?: number
  logger?: BusLogger
}

/** A `bus_timers` row as `select *` gives it back. */
type TimerRow = Selectable<BusTimersTable>

const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v)
const date = (v: Date | string) => (v instanceof Date ? v : new Date(v))
const secs = (ms: number) => sql`make_interval(secs => ${ms / 1000}::float8)`

/** The bus message id of one firing: a rescheduled timer is a new message, a re-fired one is not. */
export const timerMessageId = (id: string, generation: number): string => `timer:${id}:${generation}`

/**
 * Durable timers: a row per timer; when due, a message on the bus (so the reaction gets the bus'
 * retries and dead letters). Any number of processes may run `start()`: each due timer is claimed
 * by one with FOR UPDATE SKIP LOCKED and a lease, published, then marked fired. Fired at least
 * once: a process that dies between publishing and marking leaves the lease to lapse and the
 * timer is published again under the same message id.
 */
export class Timers {
  private readonly pollMs: number
  private readonly batchSize: number
  private readonly leaseMs: number
  private readonly logger: BusLogger
  private readonly wakeup = new Wakeup()
  private stopped = true
  private loopDone: Promise<void> = Promise.resolve()

  constructor(private readonly db: Kysely<Database>, private readonly bus: Bus, opts: TimersOptions = {}) {
    this.pollMs = opts.pollMs ?? 1000
    this.batchSize = opts.batchSize ?? 100
    this.leaseMs = opts.leaseMs ?? 3_000
    this.logger = opts.logger ?? silentLogger
  }

  /** Schedules (or moves) a timer. Pass the command's transaction to schedule it with its writes. */
  async schedule(spec: TimerSpec, trx: Kysely<Database> = this.db): Promise<void> {
    await this.change([{ schedule: spec }], trx)
  }

  /**
   * Schedules and cancels timers as if one by one in the given order, in one statement: a timer
   * scheduled then cancelled in the same call is stored cancelled, one cancelled then scheduled
   * is scheduled. Several schedules of one timer in one call bump its generation once.
   */
  async change(changes: TimerChange[], trx: Kysely<Database> = this.db): Promise<void> {
    const statement = this.changeStatement(changes)
    if (!statement) return
    await trx.executeQuery(statement)
    if (trx === this.db && changes.some((c) => 'schedule' in c)) this.wakeup.kick()
  }

  /**
   * change() as one statement, to run elsewhere (an idempotent consumer's one-trip batch); undefined
   * when there is nothing to change. Whoever runs it outside change() wakes the timers with `kick()`.
   */
  changeStatement(changes: TimerChange[]): CompiledQuery | undefined {
    const last = new Map<string, { spec: TimerSpec | undefined; cancelled: boolean }>()
    for (const c of changes) {
      if ('schedule' in c) {
        assertSubject(c.schedule.subject)
        last.set(c.schedule.id, { spec: c.schedule, cancelled: false })
      } else {
        const seen = last.get(c.cancel)
        last.set(c.cancel, { spec: seen?.spec, cancelled: true })
      }
    }
    // By id: two processes changing overlapping timers take the row locks in one order.
    const ids = [...last.keys()].sort()
    const cancels = ids.filter((id) => !last.get(id)!.spec)
    const upserts = ids.filter((id) => last.get(id)!.spec).map((id) => ({ ...last.get(id)!, spec: last.get(id)!.spec! }))
    if (upserts.length === 0 && cancels.length === 0) return undefined
    const cancel = sql`
      update bus_timers set state = 'cancelled', leased_until = null, updated_at = now()
      where id = any(${cancels}::text[]) and state = 'scheduled'`
    if (upserts.length === 0) return cancel.compile(this.db)
    const upsert = sql`
      insert into bus_timers (id, subject, ordering_key, data, headers, fire_at, state)
      select id, subject, ordering_key, data::jsonb, headers::jsonb, fire_at, state
      from unnest(${upserts.map((u) => u.spec.id)}::text[], ${upserts.map((u) => u.spec.subject)}::text[],
        ${upserts.map((u) => u.spec.key ?? null)}::text[], ${upserts.map((u) => JSON.stringify(u.spec.data ?? null))}::text[],
        ${upserts.map((u) => JSON.stringify(u.spec.headers ?? {}))}::text[], ${upserts.map((u) => u.spec.fireAt.toISOString())}::timestamptz[],
        ${upserts.map((u) => (u.cancelled ? 'cancelled' : 'scheduled'))}::text[])
        as u(id, subject, ordering_key, data, headers, fire_at, state)
      on conflict (id) do update set
        generation = bus_timers.generation + 1, subject = excluded.subject, ordering_key = excluded.ordering_key,
        data = excluded.data, headers = excluded.headers, fire_at = excluded.fire_at, state = excluded.state,
        leased_until = null, attempts = 0, last_error = null, fired_at = null, updated_at = now()`
    // The ids of the two parts are disjoint, so one statement can carry both.
    return (cancels.length === 0 ? upsert : sql`with cancelled as (${cancel}) ${upsert}`).compile(this.db)
  }

  /** True when the timer was still scheduled. One already being fired at this instant may still fire. */
  async cancel(id: string, trx: Kysely<Database> = this.db): Promise<boolean> {
    const r = await sql`
      update bus_timers set state = 'cancelled', leased_until = null, updated_at = now()
      where id = ${id} and state = 'scheduled'`.execute(trx)
    return Number(r.numAffectedRows ?? 0) === 1
  }

  async get(id: string): Promise<Timer | undefined> {
    const r = await sql<TimerRow>`select * from bus_timers where id = ${id}`.execute(this.db)
    const row = r.rows[0]
    if (!row) return undefined
    return {
      id: row.id, generation: row.generation, subject: row.subject, key: row.ordering_key ?? undefined,
      data: parse(row.data), headers: headersOf(row.headers), fireAt: date(row.fire_at),
      state: row.state, attempts: row.attempts, lastError: row.last_error ?? undefined,
      firedAt: row.fired_at ? date(row.fired_at) : undefined,
    }
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.loopDone = this.loop()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.wakeup.kick()
    await this.loopDone
  }

  private async loop(): Promise<void> {
    let failures = 0
    while (!this.stopped) {
      try {
        const { fired, nextMs } = await this.fireDueAndLook()
        failures = 0
        if (fired === this.batchSize) continue
        await this.wakeup.sleep(nextMs === null ? this.pollMs : Math.min(this.pollMs, Math.max(1, Math.ceil(nextMs) + 1)))
      } catch (err) {
        failures++
        this.logger.error({ err }, 'firing timers failed; retrying')
        await this.wakeup.sleep(Math.min(this.pollMs, 50 * 2 ** Math.min(failures, 6)))
      }
    }
  }

  /** Publishes every due timer once; returns how many. */
  async fireDue(): Promise<number> {
    return (await this.fireDueAndLook()).fired
  }

  /**
   * fireDue(), and in the same statement how long until the next timer not claimed now is due (null:
   * none is scheduled): an idle loop costs one statement a poll.
   */
  private async fireDueAndLook(): Promise<{ fired: number; nextMs: number | null }> {
    const r = await sql<TimerRow & { next_ms: number | null; claimed: boolean }>`
      with due as (
        select id from bus_timers
        where state = 'scheduled' and fire_at <= clock_timestamp()
          and (leased_until is null or leased_until <= clock_timestamp())
        order by fire_at limit ${this.batchSize}
        for update skip locked),
      claimed as (
        update bus_timers t set leased_until = clock_timestamp() + ${secs(this.leaseMs)}, attempts = t.attempts + 1, updated_at = now()
        from due where t.id = due.id
        returning t.*),
      next as (
        select ((extract(epoch from min(greatest(fire_at, coalesce(leased_until, fire_at)))) - extract(epoch from clock_timestamp())) * 1000)::float8 as next_ms
        from bus_timers where state = 'scheduled' and id not in (select id from due))
      select claimed.*, claimed.id is not null as claimed, next.next_ms from next left join claimed on true`.execute(this.db)
    const nextMs = r.rows[0]?.next_ms === null || r.rows[0]?.next_ms === undefined ? null : Number(r.rows[0].next_ms)
    const rows = r.rows.filter((row) => row.claimed)
    if (rows.length === 0) return { fired: 0, nextMs }
    try {
      await this.bus.publish(rows.map((row) => ({
        subject: row.subject,
        id: timerMessageId(row.id, row.generation),
        data: parse(row.data),
        key: row.ordering_key ?? undefined,
        headers: { ...headersOf(row.headers), 'Bus-Timer-Id': row.id, 'Bus-Fire-At': date(row.fire_at).toISOString() },
      })))
    } catch (err) {
      await sql`update bus_timers set last_error = ${messageOf(err).slice(0, 2000)}
                where id = any(${rows.map((r) => r.id)}::text[])`.execute(this.db).catch(() => undefined)
      throw err
    }
    // Only the generation that was published: a timer rescheduled meanwhile stays scheduled.
    await sql`
      update bus_timers t set state = 'fired', fired_at = clock_timestamp(), leased_until = null, updated_at = now()
      from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.generation)}::int[]) as f(id, generation)
      where t.id = f.id and t.generation = f.generation and t.state = 'scheduled'`.execute(this.db)
    return { fired: rows.length, nextMs }
  }

  async status(): Promise<TimerStatus> {
    return timerStatus(this.db)
  }

  /** Deletes fired and cancelled timers older than `olderThanMs`. */
  async purge(olderThanMs: number): Promise<number> {
    const r = await sql`delete from bus_timers where state <> 'scheduled' and updated_at < clock_timestamp() - ${secs(olderThanMs)}`.execute(this.db)
    return Number(r.numAffectedRows ?? 0)
  }
}

export async function timerStatus(db: Kysely<Database>): Promise<TimerStatus> {
  const r = await sql<{ scheduled: number; overdue: number; oldest_ms: number | null }>`
    select count(*)::int as scheduled,
           (count(*) filter (where fire_at <= clock_timestamp()))::int as overdue,
           (extract(epoch from clock_timestamp() - min(fire_at) filter (where fire_at <= clock_timestamp())) * 1000)::float8 as oldest_ms
    from bus_timers where state = 'scheduled'`.execute(db)
  const row = r.rows[0]
  return { scheduled: Number(row?.scheduled ?? 0), overdue: Number(row?.overdue ?? 0), oldestOverdueMs: Math.max(0, Number(row?.oldest_ms ?? 0)) }
}
