import type { EventStore, ReadAllResult } from './event-store.js'
import type { WrappingEventStore } from './wrapping.js'

/** A finished read is shared with readers that ask within this long (and heard of no append since). */
const SHARE_MS = 25

interface Read { generation: number; at: number; result: Promise<ReadAllResult> }

/**
 * The log as this process's readers see it (the projector, the relay, the notary): one tail, read
 * once. Readers woken by the same append ask for the same events, usually from the same checkpoint;
 * the second of them is handed the first one's read, in flight or just finished, instead of sending
 * its own. A read is handed on only while no append was heard since it began (its `generation`), and
 * for SHARE_MS at most: a reader woken by an append, or polling, always gets a read that began
 * after it. A read is a prefix of the log after its checkpoint in any case (DESIGN §2), so a shared
 * one is never wrong, at worst shorter.
 *
 * It also keeps the newest position the appends reported (this process's own, and other processes'
 * by their notification): `headPosition` answers from it, without a query, once one is known.
 */
class SharedLog implements WrappingEventStore {
  readonly startPosition: string
  private generation = 0
  private readonly reads = new Map<string, Read>()
  private readonly listeners = new Set<(head?: string) => void>()
  private knownHead: string | undefined
  private readonly unsubscribe: () => void

  constructor(private readonly store: EventStore) {
    this.startPosition = store.startPosition
    // Subscribed first: the generation moves before any reader is woken.
    this.unsubscribe = store.onAppended((head) => {
      this.generation++
      if (head !== undefined && (this.knownHead === undefined || store.comparePositions(head, this.knownHead) > 0)) this.knownHead = head
      for (const l of this.listeners) {
        try { l(head) } catch { /* a listener's failure is its own */ }
      }
    })
  }

  get wrapped(): EventStore { return this.store }
  rewrap(inner: EventStore): EventStore { return new SharedLog(inner) }

  readAll(checkpoint: string | null, limit: number): Promise<ReadAllResult> {
    const key = `${checkpoint ?? ''}|${limit}`
    const now = Date.now()
    const shared = this.reads.get(key)
    if (shared && shared.generation === this.generation && now - shared.at <= SHARE_MS) return shared.result
    const read: Read = { generation: this.generation, at: now, result: this.store.readAll(checkpoint, limit) }
    this.reads.set(key, read)
    read.result.then((r) => {
      const last = r.events.at(-1)?.position
      if (last && (this.knownHead === undefined || this.store.comparePositions(last, this.knownHead) > 0)) this.knownHead = last
    }, () => { if (this.reads.get(key) === read) this.reads.delete(key) })
    // Old entries go as new ones come: readers stand at a few checkpoints at most.
    if (this.reads.size > 16) for (const [k, r] of this.reads) if (now - r.at > SHARE_MS) this.reads.delete(k)
    return read.result
  }

  /** The newest position an append reported or a read returned; asks the store until one is known. */
  async headPosition(): Promise<string> {
    if (this.knownHead !== undefined) return this.knownHead
    const head = await this.store.headPosition()
    if (this.knownHead === undefined || this.store.comparePositions(head, this.knownHead) > 0) this.knownHead = head
    return this.knownHead
  }

  onAppended(listener: (head?: string) => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  append: EventStore['append'] = (streamId, events, expected) => this.store.append(streamId, events, expected)
  appendMany: EventStore['appendMany'] = (appends) => this.store.appendMany(appends)
  readStream: EventStore['readStream'] = (streamId, opts) => this.store.readStream(streamId, opts)
  readStreams: EventStore['readStreams'] = (streamIds, opts) => this.store.readStreams(streamIds, opts)
  eventsAfter: EventStore['eventsAfter'] = (position) => this.store.eventsAfter(position)
  comparePositions: EventStore['comparePositions'] = (a, b) => this.store.comparePositions(a, b)

  async close(): Promise<void> {
    this.unsubscribe()
    this.listeners.clear()
  }
}

/**
 * The shared tail of `store` for this process's log readers (see SharedLog). Closing it stops its
 * listening, not the store.
 */
export const sharedLog = (store: EventStore): EventStore => new SharedLog(store)
