import { randomUUID } from 'node:crypto'
import {
  type AllStreamSubscription, type AppendStreamState, BACKWARDS, END, ErrorType, excludeSystemEvents, FORWARDS,
  isCommandError, jsonEvent, KurrentDBClient, NO_STREAM, type Position, START, STREAM_EXISTS, ANY,
} from '@kurrent/kurrentdb-client'
import {
  type AppendResult, ConcurrencyError, type EventMetadata, type EventStore, type ExpectedVersion, type NewEvent,
  type ReadAllResult, type RecordedEvent, type StreamAppend,
} from './event-store.js'
import type { Upcaster } from './upcasting.js'
import { messageOf } from '../../shared/thrown.js'
import { currentSchemaVersion } from '../../../schemas/events/upcasters.js'

/** `commit:prepare`; `0:0` stands for "before every event" (the log opens with system records). */
const START_POSITION = '0:0'
/** How far back a retried append is looked for when its ids are not all new (EventStoreDB dedupes by id only at the stream's tail). */
const DEDUPE_WINDOW = 200
const SCHEMA_VERSION_KEY = '$schemaVersion'
/** Multi-stream appends carry string metadata only: ours goes in as one JSON string under this key. */
const METADATA_JSON_KEY = '$json'

const toPosition = (p: string): Position => {
  const m = /^(\d+):(\d+)$/.exec(p)
  if (!m) throw new Error(`not a position of this store: ${p}`)
  return { commit: BigInt(m[1]!), prepare: BigInt(m[2]!) }
}
const fromPosition = (p: Position): string => `${p.commit}:${p.prepare}`

const errorType = (err: unknown): string | undefined =>
  err instanceof Error && isCommandError(err) ? err.type : undefined

/** The client's own error for a failed expected-state check, which names the stream and its actual state. */
const wrongVersion = (err: unknown) =>
  err instanceof Error && isCommandError(err) && err.type === ErrorType.WRONG_EXPECTED_VERSION ? err : undefined

/** A fresh record of a value's own entries, as spreading it would give (the metadata comes back parsed, of any shape). */
const entriesOf = (v: unknown): Record<string, unknown> => Object.fromEntries(Object.entries(v ?? {}))

interface KurrentRecorded {
  streamId: string
  id: string
  revision: bigint
  type: string
  created: Date
  data: unknown
  metadata: unknown
  position?: Position | undefined
}

/**
 * EventStoreDB/KurrentDB adapter (DESIGN §2). Positions are `commit:prepare` strings; our stream
 * versions are 1-based counts while Kurrent revisions are 0-based; system events (`$…`) are
 * never returned by readAll. Checkpoints for projections stay in PostgreSQL.
 */
export class KurrentEventStore implements EventStore {
  readonly startPosition = START_POSITION
  private readonly listeners = new Set<() => void>()
  private subscription: AllStreamSubscription | undefined
  private resubscribe: NodeJS.Timeout | undefined
  private closed = false

  constructor(
    private readonly client: KurrentDBClient,
    private readonly upcast: Upcaster = (e) => e,
    /** A reader made by asStored: the client belongs to the store it was made from. */
    private readonly borrowsClient = false,
  ) {}

  /** The same log read as it was written, without the upcaster (the notary seals stored events). */
  asStored(): EventStore {
    return new KurrentEventStore(this.client, (e) => e, true)
  }

  /** `esdb://…` or `kurrentdb://…` connection string; checks the server answers before returning. */
  static async connect(url: string, upcast?: Upcaster): Promise<KurrentEventStore> {
    const client = KurrentDBClient.connectionString(url.replace(/^kurrent:\/\//, 'kurrentdb://'))
    const store = new KurrentEventStore(client, upcast)
    try {
      await store.headPosition()
    } catch (err) {
      await client.dispose().catch(() => undefined)
      throw new Error(`EventStoreDB at ${url} is not reachable: ${messageOf(err)}`, { cause: err })
    }
    return store
  }

  comparePositions(a: string, b: string): number {
    const pa = toPosition(a)
    const pb = toPosition(b)
    if (pa.commit !== pb.commit) return pa.commit < pb.commit ? -1 : 1
    return pa.prepare === pb.prepare ? 0 : pa.prepare < pb.prepare ? -1 : 1
  }

  private static streamState(expected: ExpectedVersion): AppendStreamState {
    if (expected === 'no_stream' || expected === 0) return NO_STREAM
    if (expected === 'any') return ANY
    if (expected === 'stream_exists') return STREAM_EXISTS
    return BigInt(expected - 1)
  }

  async append(streamId: string, events: NewEvent[], expected: ExpectedVersion): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event')
    const ids = events.map((e) => e.id ?? randomUUID())
    if (events.some((e) => e.id !== undefined)) {
      const earlier = await this.findAppended(streamId, ids, expected)
      if (earlier) return earlier
    }
    try {
      const result = await this.client.appendToStream(streamId, events.map((e, i) => jsonEvent({
        id: ids[i]!,
        type: e.type,
        data: (e.data ?? null) as any,
        metadata: { ...e.metadata, [SCHEMA_VERSION_KEY]: e.schemaVersion ?? currentSchemaVersion(e.type) },
      })), { streamState: KurrentEventStore.streamState(expected) })
      this.wake()
      return {
        appended: true,
        nextVersion: Number(result.nextExpectedRevision) + 1,
        position: result.position ? fromPosition(result.position) : await this.positionOfRevision(streamId, result.nextExpectedRevision),
      }
    } catch (err) {
      const conflict = wrongVersion(err)
      if (conflict) {
        const actual = conflict.actualState
        throw new ConcurrencyError(streamId, expected, typeof actual === 'bigint' ? Number(actual) + 1 : undefined)
      }
      throw err
    }
  }

  /**
   * KurrentDB's multi-stream append: one atomic write. A retried call (the same ids, all found at
   * the streams' tails) appends nothing and reports the first copies, as a single append does.
   * Multi-stream appends require metadata values to be strings, so the metadata travels as JSON.
   */
  async appendMany(appends: StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 0) throw new Error('appendMany needs at least one stream')
    if (appends.length === 1) return [await this.append(appends[0]!.streamId, appends[0]!.events, appends[0]!.expected)]
    const withIds = appends.map((a) => ({ ...a, ids: a.events.map((e) => e.id ?? randomUUID()) }))
    if (appends.every((a) => a.events.some((e) => e.id !== undefined))) {
      const earlier = await Promise.all(withIds.map((a) => this.findAppended(a.streamId, a.ids, a.expected)))
      if (earlier.every((e) => e !== undefined)) return earlier
    }
    try {
      const result = await this.client.multiStreamAppend(withIds.map((a) => ({
        streamName: a.streamId,
        expectedState: KurrentEventStore.streamState(a.expected),
        events: a.events.map((e, i) => jsonEvent({
          id: a.ids[i]!,
          type: e.type,
          data: (e.data ?? null) as any,
          metadata: { [METADATA_JSON_KEY]: JSON.stringify({ ...e.metadata, [SCHEMA_VERSION_KEY]: e.schemaVersion ?? currentSchemaVersion(e.type) }) },
        })),
      })))
      this.wake()
      return await Promise.all(result.responses.map(async (r) => ({
        appended: true,
        nextVersion: Number(r.revision) + 1,
        position: await this.positionOfRevision(r.streamName, r.revision),
      })))
    } catch (err) {
      const conflict = wrongVersion(err)
      if (conflict) {
        const failed = withIds.find((a) => String(conflict.streamName ?? '') === a.streamId) ?? withIds[0]!
        const actual = conflict.actualState
        throw new ConcurrencyError(failed.streamId, failed.expected, typeof actual === 'bigint' ? Number(actual) + 1 : undefined)
      }
      throw err
    }
  }

  /** A retried append (same ids) appends nothing and reports the first copy, as the PostgreSQL adapter does. */
  private async findAppended(streamId: string, ids: string[], expected: ExpectedVersion): Promise<AppendResult | undefined> {
    const tail = await this.read(streamId, { direction: BACKWARDS, fromRevision: END, maxCount: DEDUPE_WINDOW })
    const found = tail.filter((e) => ids.includes(e.id))
    if (found.length === 0) return undefined
    if (found.length !== ids.length) throw new ConcurrencyError(streamId, expected, Number(tail[0]?.revision ?? -1n) + 1)
    const last = found[0]!
    return { appended: false, nextVersion: Number(last.revision) + 1, position: last.position ? fromPosition(last.position) : START_POSITION }
  }

  private async positionOfRevision(streamId: string, revision: bigint): Promise<string> {
    const [e] = await this.read(streamId, { direction: FORWARDS, fromRevision: revision, maxCount: 1 })
    return e?.position ? fromPosition(e.position) : START_POSITION
  }

  private async read(streamId: string, options: Parameters<KurrentDBClient['readStream']>[1]): Promise<KurrentRecorded[]> {
    const out: KurrentRecorded[] = []
    try {
      for await (const resolved of this.client.readStream(streamId, options)) {
        if (resolved.event) out.push(resolved.event)
      }
    } catch (err) {
      if (errorType(err) === ErrorType.STREAM_NOT_FOUND) return []
      throw err
    }
    return out
  }

  /** KurrentDB reads one stream per call: the streams side by side. */
  async readStreams(streamIds: readonly string[], opts: { types?: readonly string[] } = {}): Promise<Map<string, RecordedEvent[]>> {
    const out = new Map<string, RecordedEvent[]>()
    await Promise.all(streamIds.map(async (id) => {
      const events = (await this.readStream(id)).filter((e) => !opts.types || opts.types.includes(e.type))
      if (events.length) out.set(id, events)
    }))
    return out
  }

  async readStream(streamId: string, opts: { fromVersion?: number; toPosition?: string; until?: Date } = {}): Promise<RecordedEvent[]> {
    const from = Math.max(1, opts.fromVersion ?? 1)
    const events = (await this.read(streamId, { direction: FORWARDS, fromRevision: BigInt(from - 1) })).map((e) => this.toRecorded(e))
    return events.filter((e) =>
      (!opts.toPosition || this.comparePositions(e.position, opts.toPosition) <= 0)
      && (!opts.until || e.recordedAt.getTime() <= opts.until.getTime()))
  }

  async readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult> {
    const from = checkpoint ?? START_POSITION
    const fromStart = this.comparePositions(from, START_POSITION) === 0
    const events: RecordedEvent[] = []
    // The read starts at the checkpoint itself (inclusive), hence one more and the skip.
    for await (const resolved of this.client.readAll({
      fromPosition: fromStart ? START : toPosition(from),
      direction: FORWARDS,
      maxCount: limit + 1,
      filter: excludeSystemEvents(),
    })) {
      const e: KurrentRecorded | undefined = resolved.event
      if (!e || e.streamId.startsWith('$') || e.type.startsWith('$')) continue
      const recorded = this.toRecorded(e)
      if (!fromStart && this.comparePositions(recorded.position, from) <= 0) continue
      events.push(recorded)
      if (events.length === limit) break
    }
    return { events, checkpoint: events.length ? events[events.length - 1]!.position : from }
  }

  /** Counting would read the whole log: only "caught up" (0) is known. */
  async eventsAfter(position: string): Promise<number | null> {
    return this.comparePositions(position, await this.headPosition()) >= 0 ? 0 : null
  }

  async headPosition(): Promise<string> {
    for await (const resolved of this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, filter: excludeSystemEvents() })) {
      const p = resolved.event?.position
      if (p) return fromPosition(p)
    }
    return START_POSITION
  }

  onAppended(listener: (head?: string) => void): () => void {
    this.listeners.add(listener)
    this.subscribe()
    return () => { this.listeners.delete(listener) }
  }

  /** One $all subscription from the end wakes every listener, whichever process appended. */
  private subscribe(): void {
    if (this.subscription || this.closed) return
    const sub = this.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() })
    this.subscription = sub
    sub.on('data', () => this.wake())
    sub.on('error', () => {
      if (this.subscription === sub) this.subscription = undefined
      if (this.closed) return
      clearTimeout(this.resubscribe)
      // Resubscribe and wake once: appends made while disconnected are found by readAll.
      this.resubscribe = setTimeout(() => { this.subscribe(); this.wake() }, 1000)
    })
  }

  private wake(): void {
    for (const l of this.listeners) {
      try { l() } catch { /* a listener's failure is its own */ }
    }
  }

  private toRecorded(e: KurrentRecorded): RecordedEvent {
    const raw = entriesOf(e.metadata)
    const packed = raw[METADATA_JSON_KEY]
    // Written by appendMany: the metadata as one JSON string.
    const meta: Record<string, unknown> = typeof packed === 'string' ? JSON.parse(packed) : raw
    const version = meta[SCHEMA_VERSION_KEY]
    const schemaVersion = typeof version === 'number' ? version : 1
    delete meta[SCHEMA_VERSION_KEY]
    return this.upcast({
      id: e.id,
      streamId: e.streamId,
      streamVersion: Number(e.revision) + 1,
      position: e.position ? fromPosition(e.position) : START_POSITION,
      type: e.type,
      data: e.data instanceof Uint8Array ? JSON.parse(Buffer.from(e.data).toString('utf8')) : e.data,
      metadata: meta as EventMetadata,
      schemaVersion,
      recordedAt: e.created,
    })
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.resubscribe)
    this.listeners.clear()
    await this.subscription?.unsubscribe().catch(() => undefined)
    if (!this.borrowsClient) await this.client.dispose()
  }
}
