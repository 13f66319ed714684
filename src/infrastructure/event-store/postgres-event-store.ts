import { randomUUID } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import {
  type AppendResult, ConcurrencyError, type EventStore, type ExpectedVersion, type NewEvent,
  type ReadAllResult, type RecordedEvent, type StreamAppend, streamCategory,
} from './event-store.js'
import type { Upcaster } from './upcasting.js'
import { APPENDED_CHANNEL, AppendNotices, type OtherReaders } from './append-notices.js'
import { textOf } from './payload.js'
import { errnoOf } from '../../shared/thrown.js'
import { json } from '../../shared/rows.js'
import { currentSchemaVersion } from '../../../schemas/events/upcasters.js'

const START = '0/0'
const POSITION = /^\d+\/\d+$/

interface EventRow {
  global_position: number | string
  tx: string
  stream_id: string
  stream_version: number | string
  event_id: string
  type: string
  schema_version: number
  data: unknown
  metadata: unknown
  /**
   * Epoch microseconds, the column's whole precision, as text: parsing timestamptz text into Dates
   * was a third of readAll's cost. The jsonb columns come as their text too (what pg would parse).
   */
  recorded_us: string
}

/** Epoch microseconds (text, after 1970) → milliseconds, and ISO 8601 with six decimals: the stored timestamptz exactly. */
const millisOf = (us: string): number => (us.length > 3 ? Number(us.slice(0, -3)) : 0)
const isoMicros = (us: string, at: Date): string => `${at.toISOString().slice(0, 23)}${us.padStart(4, '0').slice(-3)}Z`

const parsePosition = (p: string): [bigint, bigint] => {
  const [tx, pos] = p.split('/')
  if (tx === undefined || pos === undefined || !/^\d+$/.test(tx) || !/^\d+$/.test(pos)) {
    throw new Error(`not a position of this store: ${p}`)
  }
  return [BigInt(tx), BigInt(pos)]
}

/** Appends in one batch at most: bounds a statement's parameters and a batch's transaction. */
const MAX_BATCH = 200

interface AppendRow { outcome: 'existing' | 'conflict' | 'appended' | 'aborted'; version: number | null; tx: string | null; global_position: number | null; existing: unknown }

/** One caller's append (one stream) or atomic appendMany (several), waiting for a batch. */
interface PendingGroup {
  /** `drawn`: the store drew every id itself (the caller sent none), so none can be in the log yet. */
  appends: (StreamAppend & { ids: string[]; drawn: boolean })[]
  resolve: (r: AppendResult[]) => void
  reject: (err: unknown) => void
}
type PendingAppend = PendingGroup

const modeOf = (expected: ExpectedVersion): string => (expected === 0 ? 'no_stream' : typeof expected === 'number' ? 'exact' : expected)

/** What a driver's error says of its cause: the SQLSTATE, the constraint, the detail (each when it is a string). */
const pgCode = (err: unknown) => ({ code: errnoOf(err), constraint: textOf(err, 'constraint'), detail: textOf(err, 'detail') })

/**
 * Event store on a PostgreSQL table (DATABASE_URL's or the embedded server). Reading all events uses the
 * (transaction id, position) checkpoint below the snapshot xmin, so a transaction that took its
 * position first but committed last is still read (DESIGN §2, §6).
 */
export class PostgresEventStore implements EventStore {
  readonly startPosition = START
  private readonly listeners = new Set<(head?: string) => void>()
  private unlisten: (() => Promise<void>) | undefined
  private readonly queue: PendingGroup[] = []
  /** Reads attach each event's stored form (RecordedEvent.stored); set for the reader as stored. */
  protected keepsStoredForm = false
  private inFlight = 0

  constructor(
    private readonly db: Kysely<any>,
    readonly upcast: Upcaster = (e) => e,
    /** Batches of appends on their way at once (group commit); more wait and go together. */
    private readonly maxInFlight = 2,
    /** Told after each commit that appended (readers elsewhere). */
    private readonly others: OtherReaders = new AppendNotices(db),
  ) {}

  /** Wake on appends made by other processes too. */
  async listenWith(listen: (channel: string, cb: (p: string) => void) => Promise<() => Promise<void>>): Promise<void> {
    // The payload is the position of the newest append the notifying process made (or empty).
    this.unlisten = await listen(APPENDED_CHANNEL, (payload) => this.wake(POSITION.test(payload) ? payload : undefined))
  }

  onAppended(listener: (head?: string) => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  private wake(head?: string): void {
    for (const l of this.listeners) {
      try { l(head) } catch { /* a listener's failure is its own */ }
    }
  }

  /** Wakes this process's readers and tells other processes', with the newest position appended. */
  private appendedUpTo(results: AppendResult[]): void {
    let head: string | undefined
    for (const r of results) if (r.appended && (head === undefined || this.comparePositions(r.position, head) > 0)) head = r.position
    if (head === undefined) return
    this.wake(head)
    this.others.appended(head)
  }

  comparePositions(a: string, b: string): number {
    const [ta, pa] = parsePosition(a)
    const [tb, pb] = parsePosition(b)
    if (ta !== tb) return ta < tb ? -1 : 1
    return pa === pb ? 0 : pa < pb ? -1 : 1
  }

  async append(streamId: string, events: NewEvent[], expected: ExpectedVersion): Promise<AppendResult> {
    const [result] = await this.appendMany([{ streamId, events, expected }])
    return result!
  }

  async appendMany(appends: StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 0) throw new Error('appendMany needs at least one stream')
    if (appends.some((a) => a.events.length === 0)) throw new Error('append needs at least one event')
    const group = appends.map((a) => ({ ...a, ids: a.events.map((e) => e.id ?? randomUUID()), drawn: a.events.every((e) => e.id === undefined) }))
    if (this.db.isTransaction) {
      // The caller's transaction makes the group atomic.
      const results: AppendResult[] = []
      for (const a of group) results.push(await this.withConflictMapping(a.streamId, a.expected, () => this.appendIn(this.db, a.streamId, a.events, a.ids, a.expected)))
      const head = results.filter((r) => r.appended).map((r) => r.position).sort((a, b) => this.comparePositions(b, a))[0]
      if (head) this.wake(head)
      return results
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ appends: group, resolve, reject })
      this.pump()
    })
  }

  /**
   * Group commit: appends made while `maxInFlight` batches are on their way wait and go together,
   * in one statement and one transaction (one WAL flush, one round trip). Alone, an append goes at
   * once, so a quiet server adds no latency; under load the batches grow instead of the queue.
   */
  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH)
      this.inFlight++
      void this.runBatch(batch).finally(() => {
        this.inFlight--
        this.pump()
      })
    }
  }

  private async runBatch(batch: PendingGroup[]): Promise<void> {
    if (batch.length === 1 && batch[0]!.appends.length === 1) {
      const p = batch[0]!
      return this.settle(p, async () => [await this.appendAlone(p.appends[0]!)])
    }
    // Stable sort by stream: batches lock stream rows in one order (no deadlocks between batches),
    // and two appends to one stream keep their order.
    const first = (g: PendingGroup) => g.appends[0]!.streamId
    const sorted = [...batch].sort((a, b) => (first(a) < first(b) ? -1 : first(a) > first(b) ? 1 : 0))
    let rows: AppendRow[]
    try {
      rows = await this.appendBatchInOneStatement(sorted)
    } catch {
      // The batch rolled back whole (two writers created one stream, or one event id, at once):
      // each group again on its own, so only the ones that really conflict fail. The batch may have
      // committed before its answer was lost (a dropped connection): the ids are looked for again,
      // so such appends answer 'existing' instead of conflicting with themselves.
      for (const p of batch) for (const a of p.appends) a.drawn = false
      await Promise.all(batch.map((p) => this.settle(p, () => this.appendGroupAlone(p))))
      return
    }
    let at = 0
    const all: AppendResult[] = []
    for (const g of sorted) {
      const own = rows.slice(at, at + g.appends.length)
      at += g.appends.length
      try {
        const results = this.groupResultOf(g, own)
        all.push(...results)
        g.resolve(results)
      } catch (err) { g.reject(err) }
    }
    this.appendedUpTo(all)
  }

  /** A group's outcome rows: a conflict anywhere is the group's error (its other appends were undone). */
  private groupResultOf(g: PendingGroup, rows: AppendRow[]): AppendResult[] {
    const conflict = rows.findIndex((r) => r.outcome === 'conflict')
    if (conflict >= 0) {
      const a = g.appends[conflict]!
      throw new ConcurrencyError(a.streamId, a.expected, rows[conflict]!.version === null ? undefined : Number(rows[conflict]!.version))
    }
    return rows.map((row, i) => this.resultOf(row, g.appends[i]!.streamId, g.appends[i]!.ids, g.appends[i]!.expected))
  }

  private async appendGroupAlone(g: PendingGroup): Promise<AppendResult[]> {
    if (g.appends.length === 1) return [await this.appendAlone(g.appends[0]!)]
    try {
      const results = this.groupResultOf(g, await this.appendBatchInOneStatement([g]))
      this.appendedUpTo(results)
      return results
    } catch (err) {
      const { code, constraint, detail = '' } = pgCode(err)
      if (code === '23505' && (constraint === 'es_streams_pkey' || constraint === 'es_events_stream_version_key')) {
        // "Key (stream_id)=(…) already exists": the stream another writer created meanwhile.
        const a = g.appends.find((x) => detail.includes(`(${x.streamId})`)) ?? g.appends[0]!
        throw new ConcurrencyError(a.streamId, a.expected, await this.streamVersion(a.streamId))
      }
      if (code === 'ES002') {
        // A stream moved between the function's check and its lock: a conflict like any other.
        for (const a of g.appends) {
          const version = await this.streamVersion(a.streamId)
          const moved = typeof a.expected === 'number' ? version !== a.expected
            : a.expected === 'no_stream' ? version !== undefined
              : a.expected === 'stream_exists' ? version === undefined : false
          if (moved) throw new ConcurrencyError(a.streamId, a.expected, version)
        }
        throw new ConcurrencyError(g.appends[0]!.streamId, g.appends[0]!.expected, await this.streamVersion(g.appends[0]!.streamId))
      }
      throw err
    }
  }

  private async settle(p: PendingGroup, run: () => Promise<AppendResult[]>): Promise<void> {
    try { p.resolve(await run()) } catch (err) { p.reject(err) }
  }

  private async appendAlone({ streamId, events, ids, expected, drawn }: PendingAppend['appends'][number]): Promise<AppendResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        const checkIds = !drawn || attempt > 0
        const result = await this.withConflictMapping(streamId, expected, () => this.appendInOneStatement(streamId, events, ids, expected, checkIds))
        this.appendedUpTo([result])
        return result
      } catch (err) {
        // A concurrent writer stored one of these ids first: the second look finds it ('existing').
        if (pgCode(err).code === '23505' && pgCode(err).constraint === 'es_events_event_id_key' && attempt === 0) continue
        throw err
      }
    }
  }

  /** Unique violations on the stream are version conflicts. */
  private async withConflictMapping(streamId: string, expected: ExpectedVersion, run: () => Promise<AppendResult>): Promise<AppendResult> {
    try {
      return await run()
    } catch (err) {
      const { code, constraint } = pgCode(err)
      if (code === '23505' && (constraint === 'es_streams_pkey' || constraint === 'es_events_stream_version_key')) {
        throw new ConcurrencyError(streamId, expected, await this.streamVersion(streamId, this.db))
      }
      throw err
    }
  }

  /** Appends inside the caller's transaction (used by batching and by idempotent consumers). */
  async appendIn(trx: Kysely<any>, streamId: string, events: NewEvent[], ids: string[], expected: ExpectedVersion): Promise<AppendResult> {
    const existing = await sql<{ stream_id: string; stream_version: number; tx: string; global_position: number }>`
      select stream_id, stream_version, transaction_id::text as tx, global_position
      from es_events where event_id = any(${ids}::uuid[])
      order by transaction_id, global_position`.execute(trx)
    if (existing.rows.length > 0) {
      if (existing.rows.length !== ids.length || existing.rows.some((r) => r.stream_id !== streamId)) {
        throw new ConcurrencyError(streamId, expected, undefined)
      }
      const last = existing.rows[existing.rows.length - 1]!
      return { appended: false, nextVersion: Number(last.stream_version), position: `${last.tx}/${last.global_position}` }
    }
    const n = events.length
    const newVersion = await this.bumpVersion(trx, streamId, n, expected)
    const first = newVersion - n + 1
    const inserted = await sql<{ tx: string; global_position: number }>`
      insert into es_events (stream_id, stream_version, event_id, type, schema_version, data, metadata)
      select ${streamId}, u.v, u.id, u.t, u.sv, u.d, u.m
      from unnest(
        ${events.map((_, i) => first + i)}::bigint[], ${ids}::uuid[], ${events.map((e) => e.type)}::text[],
        ${events.map((e) => e.schemaVersion ?? currentSchemaVersion(e.type))}::int[],
        ${events.map((e) => JSON.stringify(e.data ?? null))}::jsonb[],
        ${events.map((e) => JSON.stringify(e.metadata))}::jsonb[]
      ) as u(v, id, t, sv, d, m)
      returning transaction_id::text as tx, global_position`.execute(trx)
    await sql`select pg_notify(${APPENDED_CHANNEL}, '')`.execute(trx)
    const last = inserted.rows.reduce((a, b) => (Number(b.global_position) > Number(a.global_position) ? b : a))
    return { appended: true, nextVersion: newVersion, position: `${last.tx}/${last.global_position}` }
  }

  /**
   * The same append as `appendIn`, in one round trip: the `es_append_v2` function (migrations
   * 2026-11-22T00-04 and -07) checks for repeated ids (unless the store drew them), moves the
   * version by compare-and-set, inserts.
   */
  private async appendInOneStatement(streamId: string, events: NewEvent[], ids: string[], expected: ExpectedVersion, checkIds: boolean): Promise<AppendResult> {
    const r = await sql<AppendRow>`
      select * from es_append_v2(
        ${streamId}, ${streamCategory(streamId)}, ${modeOf(expected)}, ${typeof expected === 'number' ? expected : null}::bigint,
        ${ids}::uuid[], ${events.map((e) => e.type)}::text[], ${events.map((e) => e.schemaVersion ?? currentSchemaVersion(e.type))}::int[],
        ${events.map((e) => JSON.stringify(e.data ?? null))}::jsonb[], ${events.map((e) => JSON.stringify(e.metadata))}::jsonb[], ${checkIds})`.execute(this.db)
    return this.resultOf(r.rows[0]!, streamId, ids, expected)
  }

  /**
   * Groups of appends through `es_append_batch_v2` (migration 2026-11-22T00-06: set-based when
   * nothing conflicts, else es_append_batch's per-append rules): one outcome row per append, in order.
   */
  private async appendBatchInOneStatement(batch: PendingGroup[]): Promise<AppendRow[]> {
    const appends = batch.flatMap((g, gi) => g.appends.map((a) => ({ ...a, group: gi })))
    const events = appends.flatMap((a) => a.events)
    const r = await sql<AppendRow & { idx: number }>`
      select * from es_append_batch_v2(
        ${appends.map((a) => a.streamId)}::text[], ${appends.map((a) => streamCategory(a.streamId))}::text[],
        ${appends.map((a) => modeOf(a.expected))}::text[], ${appends.map((a) => (typeof a.expected === 'number' ? a.expected : null))}::bigint[],
        ${appends.map((a) => a.events.length)}::int[], ${appends.map((a) => a.group)}::int[], ${appends.flatMap((a) => a.ids)}::uuid[],
        ${events.map((e) => e.type)}::text[], ${events.map((e) => e.schemaVersion ?? currentSchemaVersion(e.type))}::int[],
        ${events.map((e) => JSON.stringify(e.data ?? null))}::jsonb[], ${events.map((e) => JSON.stringify(e.metadata))}::jsonb[])`.execute(this.db)
    const rows = [...r.rows].sort((a, b) => Number(a.idx) - Number(b.idx))
    if (rows.length !== appends.length) throw new Error(`es_append_batch_v2 answered ${rows.length} rows for ${appends.length} appends`)
    return rows
  }

  private resultOf(row: AppendRow, streamId: string, ids: string[], expected: ExpectedVersion): AppendResult {
    if (row.outcome === 'existing') {
      const existing = json<{ stream_id: string; stream_version: number; tx: string; global_position: number }[]>(row.existing)
      if (existing.length !== ids.length || existing.some((e) => e.stream_id !== streamId)) throw new ConcurrencyError(streamId, expected, undefined)
      const last = existing[existing.length - 1]!
      return { appended: false, nextVersion: Number(last.stream_version), position: `${last.tx}/${last.global_position}` }
    }
    if (row.outcome === 'conflict') throw new ConcurrencyError(streamId, expected, row.version === null ? undefined : Number(row.version))
    return { appended: true, nextVersion: Number(row.version), position: `${row.tx}/${row.global_position}` }
  }

  private async bumpVersion(trx: Kysely<any>, streamId: string, n: number, expected: ExpectedVersion): Promise<number> {
    const type = streamCategory(streamId)
    if (expected === 'no_stream' || expected === 0) {
      await sql`insert into es_streams (stream_id, stream_type, version) values (${streamId}, ${type}, ${n})`.execute(trx)
      return n
    }
    if (expected === 'any') {
      const r = await sql<{ version: number }>`
        insert into es_streams (stream_id, stream_type, version) values (${streamId}, ${type}, ${n})
        on conflict (stream_id) do update set version = es_streams.version + ${n}, updated_at = now()
        returning version`.execute(trx)
      return Number(r.rows[0]!.version)
    }
    const r = expected === 'stream_exists'
      ? await sql<{ version: number }>`
          update es_streams set version = version + ${n}, updated_at = now()
          where stream_id = ${streamId} returning version`.execute(trx)
      : await sql<{ version: number }>`
          update es_streams set version = version + ${n}, updated_at = now()
          where stream_id = ${streamId} and version = ${expected} returning version`.execute(trx)
    if (r.rows.length === 0) throw new ConcurrencyError(streamId, expected, await this.streamVersion(streamId, trx))
    return Number(r.rows[0]!.version)
  }

  async streamOfEvent(eventId: string): Promise<string | undefined> {
    const r = await sql<{ stream_id: string }>`select stream_id from es_events where event_id = ${eventId}::uuid`.execute(this.db)
    return r.rows[0]?.stream_id
  }

  /** Pass the transaction when inside one, to read what it wrote. */
  async streamVersion(streamId: string, db: Kysely<any> = this.db): Promise<number | undefined> {
    const r = await sql<{ version: number }>`select version from es_streams where stream_id = ${streamId}`.execute(db)
    return r.rows[0] ? Number(r.rows[0].version) : undefined
  }

  async readStream(streamId: string, opts: { fromVersion?: number; toPosition?: string; until?: Date } = {}): Promise<RecordedEvent[]> {
    const r = await sql<EventRow>`
      select global_position, transaction_id::text as tx, stream_id, stream_version, event_id, type,
             schema_version, data::text as data, metadata::text as metadata, ((extract(epoch from recorded_at) * 1000000)::bigint)::text as recorded_us
      from es_events
      where stream_id = ${streamId} and stream_version >= ${opts.fromVersion ?? 1}
        ${opts.until ? sql`and recorded_at <= ${opts.until.toISOString()}::timestamptz` : sql``}
      order by stream_version`.execute(this.db)
    return r.rows.map((row) => this.toRecorded(row))
  }

  async readStreams(streamIds: readonly string[], opts: { types?: readonly string[] } = {}): Promise<Map<string, RecordedEvent[]>> {
    const out = new Map<string, RecordedEvent[]>()
    if (streamIds.length === 0) return out
    const r = await sql<EventRow>`
      select global_position, transaction_id::text as tx, stream_id, stream_version, event_id, type,
             schema_version, data::text as data, metadata::text as metadata, ((extract(epoch from recorded_at) * 1000000)::bigint)::text as recorded_us
      from es_events
      where stream_id = any(${[...streamIds]}::text[]) ${opts.types ? sql`and type = any(${[...opts.types]}::text[])` : sql``}
      order by stream_id, stream_version`.execute(this.db)
    for (const row of r.rows) {
      const e = this.toRecorded(row)
      const list = out.get(e.streamId) ?? out.set(e.streamId, []).get(e.streamId)!
      list.push(e)
    }
    return out
  }

  async readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult> {
    const [tx, pos] = parsePosition(checkpoint ?? START)
    const r = await sql<EventRow>`
      select global_position, transaction_id::text as tx, stream_id, stream_version, event_id, type,
             schema_version, data::text as data, metadata::text as metadata, ((extract(epoch from recorded_at) * 1000000)::bigint)::text as recorded_us
      from es_events
      where (transaction_id, global_position) > (${tx.toString()}::xid8, ${pos.toString()}::bigint)
        and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
      order by transaction_id, global_position
      limit ${limit}`.execute(this.db)
    const events = r.rows.map((row) => this.toRecorded(row))
    return { events, checkpoint: events.length ? events[events.length - 1]!.position : (checkpoint ?? START) }
  }

  async headPosition(): Promise<string> {
    const r = await sql<{ tx: string; global_position: number }>`
      select transaction_id::text as tx, global_position from es_events
      order by transaction_id desc, global_position desc limit 1`.execute(this.db)
    const row = r.rows[0]
    return row ? `${row.tx}/${row.global_position}` : START
  }

  async eventsAfter(position: string): Promise<number> {
    const [tx, pos] = parsePosition(position)
    const r = await sql<{ n: number }>`
      select count(*)::int as n from es_events
      where (transaction_id, global_position) > (${tx.toString()}::xid8, ${pos.toString()}::bigint)`.execute(this.db)
    return Number(r.rows[0]?.n ?? 0)
  }

  private toRecorded(row: EventRow): RecordedEvent {
    const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v)
    const recordedAt = new Date(millisOf(row.recorded_us))
    if (this.keepsStoredForm) {
      // As written: the notary seals these bytes, so that any change of a stored value shows.
      // Not enumerable: the event as every reader sees it (spread, serialised, compared) is unchanged.
      const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
      const e: RecordedEvent = {
        id: row.event_id, streamId: row.stream_id, streamVersion: Number(row.stream_version), position: `${row.tx}/${row.global_position}`,
        type: row.type, data: parse(row.data), metadata: parse(row.metadata), schemaVersion: row.schema_version, recordedAt,
      }
      return Object.defineProperty(e, 'stored', { value: { data: text(row.data), metadata: text(row.metadata), recordedAt: isoMicros(row.recorded_us, recordedAt) } })
    }
    return this.upcast({
      id: row.event_id,
      streamId: row.stream_id,
      streamVersion: Number(row.stream_version),
      position: `${row.tx}/${row.global_position}`,
      type: row.type,
      data: parse(row.data),
      metadata: parse(row.metadata),
      schemaVersion: row.schema_version,
      recordedAt,
    })
  }

  async close(): Promise<void> {
    this.others.close()
    await this.unlisten?.()
    this.listeners.clear()
  }
}
