import type { EventStore, ReadAllResult } from './event-store.js'
import type { Upcaster } from './upcasting.js'
import type { WrappingEventStore } from './wrapping.js'

/**
 * A read is shared with readers that ask within this long, heard of no append since, and know of no
 * event beyond it: the bound only matters for what this process cannot hear of (another process's
 * append whose notification is late, a poll).
 */
const SHARE_MS = 250

interface Read { generation: number; at: number; limit: number; result: Promise<ReadAllResult>; done?: ReadAllResult }

/** The smallest read the tail sends (the projector's batch): readers asking for fewer share it. */
const READ_AT_LEAST = 1000

/**
 * The log as this process's readers see it (the projector, the relay, the notary): one tail, read
 * once, as stored. Readers woken by the same append ask for the same events, usually from the same
 * checkpoint; the second of them is handed the first one's read, in flight or just finished,
 * instead of sending its own. A read is handed on only while no append was heard since it began
 * (its `generation`), while it reached the newest position heard of (a read that found events still
 * hidden behind an open transaction is read again), and for SHARE_MS at most: a reader woken by an
 * append always gets a read that began after it. A read is a prefix of the log after its checkpoint
 * in any case (DESIGN §2), so a shared one is never wrong, at worst shorter.
 *
 * It also keeps the newest position the appends reported (this process's own, and other processes'
 * by their notification): `headPosition` answers from it, without a query, once one is known.
 */
class Tail {
  generation = 0
  knownHead: string | undefined
  private readonly reads = new Map<string, Read>()
  readonly listeners = new Set<(head?: string) => void>()
  private readonly unsubscribe: () => void

  constructor(readonly store: EventStore) {
    // Subscribed first: the generation moves before any reader is woken.
    this.unsubscribe = store.onAppended((head) => {
      this.generation++
      if (head !== undefined) this.heard(head)
      for (const l of this.listeners) {
        try { l(head) } catch { /* a listener's failure is its own */ }
      }
    })
  }

  /** A finished read that stopped short of the newest position heard of is not handed on (it saw too little). */
  private covers(read: Read): boolean {
    if (!read.done) return true
    const { events, checkpoint } = read.done
    return events.length >= read.limit || this.knownHead === undefined || this.store.comparePositions(checkpoint, this.knownHead) >= 0
  }

  heard(position: string): void {
    if (this.knownHead === undefined || this.store.comparePositions(position, this.knownHead) > 0) this.knownHead = position
  }

  /**
   * Reads of one checkpoint are shared whatever their limits: a read asks for READ_AT_LEAST events
   * at least, and a reader that asked for fewer gets the first of them (with the checkpoint after the
   * last it got).
   */
  async readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult> {
    const read = await this.shared(checkpoint ?? '', Math.max(limit, READ_AT_LEAST))
    if (read.events.length <= limit) return read
    const events = read.events.slice(0, limit)
    return { events, checkpoint: events.at(-1)!.position }
  }

  private shared(checkpoint: string, limit: number): Promise<ReadAllResult> {
    const key = checkpoint
    const now = Date.now()
    const shared = this.reads.get(key)
    if (shared && shared.generation === this.generation && now - shared.at <= SHARE_MS && shared.limit >= limit && this.covers(shared)) return shared.result
    const read: Read = { generation: this.generation, at: now, limit, result: this.store.readAll(checkpoint || null, limit) }
    this.reads.set(key, read)
    read.result.then((r) => {
      read.done = r
      const last = r.events.at(-1)?.position
      if (last) this.heard(last)
    }, () => { if (this.reads.get(key) === read) this.reads.delete(key) })
    // Old entries go as new ones come: readers stand at a few checkpoints at most.
    if (this.reads.size > 16) for (const [k, r] of this.reads) if (now - r.at > SHARE_MS) this.reads.delete(k)
    return read.result
  }

  async headPosition(): Promise<string> {
    if (this.knownHead === undefined) this.heard(await this.store.headPosition())
    return this.knownHead!
  }

  close(): void {
    this.unsubscribe()
    this.listeners.clear()
  }
}

/** One reader's view of the tail: the events as stored, or through the upcaster. */
class SharedLog implements WrappingEventStore {
  readonly startPosition: string

  constructor(private readonly tail: Tail, private readonly upcast: Upcaster | undefined) {
    this.startPosition = tail.store.startPosition
  }

  get wrapped(): EventStore { return this.tail.store }
  rewrap(inner: EventStore): EventStore { return new SharedLog(new Tail(inner), this.upcast) }

  async readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult> {
    const read = await this.tail.readAll(checkpoint, limit)
    const upcast = this.upcast
    return upcast ? { events: read.events.map((e) => upcast(e)), checkpoint: read.checkpoint } : read
  }

  /** The newest position an append reported or a read returned; asks the store until one is known. */
  headPosition(): Promise<string> { return this.tail.headPosition() }

  onAppended(listener: (head?: string) => void): () => void {
    this.tail.listeners.add(listener)
    return () => { this.tail.listeners.delete(listener) }
  }

  private get store(): EventStore { return this.tail.store }
  append: EventStore['append'] = (streamId, events, expected) => this.store.append(streamId, events, expected)
  appendMany: EventStore['appendMany'] = (appends) => this.store.appendMany(appends)
  readStream: EventStore['readStream'] = async (streamId, opts) => this.mapped(await this.store.readStream(streamId, opts))
  readStreams: EventStore['readStreams'] = async (streamIds, opts) =>
    new Map([...await this.store.readStreams(streamIds, opts)].map(([id, events]) => [id, this.mapped(events)]))
  eventsAfter: EventStore['eventsAfter'] = (position) => this.store.eventsAfter(position)
  comparePositions: EventStore['comparePositions'] = (a, b) => this.store.comparePositions(a, b)

  private mapped<E extends Parameters<Upcaster>[0]>(events: E[]) {
    const upcast = this.upcast
    return upcast ? events.map((e) => upcast(e)) : events
  }

  async close(): Promise<void> { this.tail.close() }
}

/**
 * The shared tail of `asStored` (a reader of the log as it was written) for this process's log
 * readers (see Tail): `log` gives the events through `upcast`, as every reader but the notary wants
 * them; `asStored` as written, for the notary. Both share every read. Closing stops the listening,
 * not the store.
 */
export function sharedLog(asStored: EventStore, upcast: Upcaster): { log: EventStore; asStored: EventStore; close(): void } {
  const tail = new Tail(asStored)
  return { log: new SharedLog(tail, upcast), asStored: new SharedLog(tail, undefined), close: () => tail.close() }
}
