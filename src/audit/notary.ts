import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { EventStore, RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { Wakeup } from '../shared/wakeup.js'
import { runStepLoop } from '../shared/step-loop.js'
import { CompactRange, type NodeId, perfectSubtrees } from './merkle.js'
import { sealedLeafHash } from './stored-leaf.js'
import { loadMapState, mapCommitOf, type MapState } from './map-commit.js'
import type { MapCommit } from './map-store.js'
import { leaseHolder, recordRefusal } from './notary-watch.js'
import { type NotaryKey, signTreeHead } from './tree-head.js'
import { rootAt } from './proofs.js'
import { storeWitnessedHead, type Witnessing, type WitnessingState, WitnessRefusedError } from './witness/witnessing.js'
import type { ReadAllResult } from '../infrastructure/event-store/event-store.js'
import {
  acquireNotaryLease, latestHead, type LeafRow, nodeHashes, nodeKey, releaseNotaryLease, sealBatch, type SignedHead,
} from './tree-store.js'

export interface NotaryLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface NotaryOptions {
  /** Lease and state row; one active notary per name across processes. Default `main`. */
  name?: string
  batchSize?: number
  /** Fallback poll when no append wake-up arrives. Default 1000 ms. */
  pollMs?: number
  /** A notary that stops renewing its lease (crashed) is replaced after this long. Default 3 s. */
  leaseMs?: number
  /** A new head is signed at most this long after the tree grew. Default 2 s. */
  signIntervalMs?: number
  /** ...and at once after this many events. Default 1000. */
  signEveryEvents?: number
  logger?: NotaryLogger
  /** Told after each sealed batch (the benchmark's lag figure). */
  onSealed?: (events: RecordedEvent[], treeSize: number) => void
  /** Witnesses (AUDIT_WITNESSES): a head is signed into the tables only once they all cosigned its checkpoint. */
  witnessing?: Witnessing
  /** Sign a stream map head with each tree head (complete histories). Default true. */
  streamMap?: boolean
}

/** While this notary holds the lease: the tree as committed, and its last signed head. */
interface Sealing {
  treeSize: number
  checkpoint: string
  range: CompactRange
  /** -1 while no head at all has been signed. */
  signedSize: number
  signedAt: number
  renewedAt: number
  /** The stream map as of the last map head, and the streams' tips sealed since (undefined: no map kept). */
  map: MapState | undefined
}

const silent: NotaryLogger = { info() {}, warn() {}, error() {} }

/** The stored tree disagrees with a head the notary signed: it will not sign over it. */
export class TamperedTreeError extends Error {}

/**
 * Seals the event log into a Merkle tree (RFC 9162) and signs its heads. Reads every event in commit
 * order through the event store port, as stored (no upcaster), appends its leaf, and writes the
 * leaves, the subtrees they complete and the moved checkpoint in one transaction, fenced by its
 * lease (owner id and tree size by compare-and-set): one active notary per name, taken over within
 * `leaseMs` when its owner dies. A head is signed when the tree grew and `signIntervalMs` passed
 * since the last one, or `signEveryEvents` were sealed since, or someone asked (`requestHead`).
 */
/** How long a woken notary waits for more appends before it seals (see loop()). */
const LINGER_MS = 40

export class Notary {
  readonly name: string
  readonly owner = randomUUID()
  private readonly batchSize: number
  private readonly pollMs: number
  private readonly leaseMs: number
  private readonly signIntervalMs: number
  private readonly signEveryEvents: number
  private readonly logger: NotaryLogger
  private readonly wakeup = new Wakeup()
  private sealing: Sealing | undefined
  private headWanted = false
  /** The writes on their way, in order: true when all held, false when the lease was lost. */
  private inFlight: Promise<boolean | Error> | undefined
  /** After a full batch, the next one is read while this one is hashed and written. */
  private prefetch: { from: string; result: Promise<ReadAllResult> } | undefined
  private stopped = true
  private loopDone: Promise<void> = Promise.resolve()
  private unsubscribe: (() => void) | undefined
  /** Refusals to seal over an altered store, and standbys (another process holds the lease), since start. */
  refusals = 0
  standbys = 0
  /** The lease's holder this notary last stood by for (one log line per holder). */
  private standingBy: string | null | undefined

  constructor(private readonly db: Kysely<any>, private readonly store: EventStore, private readonly key: NotaryKey, private readonly opts: NotaryOptions = {}) {
    this.name = opts.name ?? 'main'
    this.batchSize = opts.batchSize ?? 5000
    this.pollMs = opts.pollMs ?? 1000
    this.leaseMs = opts.leaseMs ?? 3000
    this.signIntervalMs = opts.signIntervalMs ?? 2000
    this.signEveryEvents = opts.signEveryEvents ?? 1000
    this.logger = opts.logger ?? silent
  }

  get isActive(): boolean { return this.sealing !== undefined }
  /** The witnesses' answers as this process last had them (undefined without AUDIT_WITNESSES). */
  get witnessing(): WitnessingState | undefined { return this.opts.witnessing?.state }
  /** Leaves sealed, while active. */
  get treeSize(): number | undefined { return this.sealing?.treeSize }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.unsubscribe = this.store.onAppended(() => this.wakeup.kick())
    this.loopDone = this.loop()
  }

  /** Stops after the batch in flight and gives the lease up; `keepLease` leaves it to lapse, as a crash would. */
  async stop(opts: { keepLease?: boolean } = {}): Promise<void> {
    if (!this.stopped) {
      this.stopped = true
      this.unsubscribe?.()
      this.wakeup.kick()
      await this.loopDone
    }
    await this.settle().catch(() => false)
    if (this.sealing && !opts.keepLease) await releaseNotaryLease(this.db, this.name, this.owner).catch(() => undefined)
    this.sealing = undefined
  }

  /** Sign a head over everything sealed as soon as possible (an auditor is waiting for a proof). */
  requestHead(): void {
    this.headWanted = true
    this.wakeup.kick()
  }

  private loop(): Promise<void> {
    return runStepLoop({
      stopped: () => this.stopped,
      step: () => this.step(),
      rest: async (next) => {
        const s = this.sealing
        let wait = next === 'hidden' ? 10 : Math.min(this.pollMs, this.leaseMs / 3)
        // A head is owed for leaves sealed since the last one: wake when it falls due.
        if (s && s.treeSize > s.signedSize) wait = Math.min(wait, Math.max(1, s.signedAt + this.signIntervalMs - Date.now()))
        await this.wakeup.sleep(wait)
        // Woken by an append: the ones close behind it go into the same batch (one write, not one
        // each); the seal is that much later, well inside its second.
        if (!this.stopped && next === 'idle') await new Promise((r) => setTimeout(r, LINGER_MS))
      },
      failed: async (err) => {
        this.sealing = undefined
        this.prefetch = undefined
        this.inFlight = undefined
        if (!(err instanceof TamperedTreeError) && !(err instanceof WitnessRefusedError)) {
          this.logger.error({ err, notary: this.name }, 'notary batch failed; retrying')
          return
        }
        this.refusals++
        const what = err instanceof WitnessRefusedError ? 'sign' : 'seal'
        this.logger.error({ err, notary: this.name, refusals: this.refusals, reason: err.message }, `notary refuses to ${what}: ${err.message}`)
        await recordRefusal(this.db, this.name, err.message).catch(() => undefined)
      },
      wakeup: this.wakeup,
    })
  }

  private headDue(s: Sealing, treeSize: number, now: number): boolean {
    if (treeSize <= s.signedSize) return false
    return this.headWanted || treeSize - s.signedSize >= this.signEveryEvents || now - s.signedAt >= this.signIntervalMs
  }

  private sign(range: CompactRange, s: Sealing, now: number): SignedHead {
    // Never earlier than the head before it: heads are ordered by time as well as by size.
    const head = { treeSize: range.size, rootHash: range.root(), timestamp: Math.max(now, s.signedAt) }
    return { ...head, signature: signTreeHead(head, this.key.privateKey), keyId: this.key.keyId }
  }

  /**
   * A head and, beside it, the stream map's head over the same leaves. The map's tips come from the
   * stored table, so the writes before must have landed: undefined when the lease was lost meanwhile.
   */
  private async signWithMap(range: CompactRange, s: Sealing, now: number): Promise<{ head: SignedHead; map: MapCommit | undefined } | undefined> {
    const head = this.sign(range, s, now)
    if (!s.map) return { head, map: undefined }
    if (!await this.settle()) return undefined
    const map = await mapCommitOf(this.db, s.map, head, this.key)
    // A first map over a long log takes a while: the lease is renewed before the write it fences.
    if (Date.now() - s.renewedAt >= this.leaseMs / 3) {
      if (!await acquireNotaryLease(this.db, this.name, this.owner, this.leaseMs, this.store.startPosition)) return undefined
      s.renewedAt = Date.now()
    }
    return { head, map }
  }

  /**
   * One batch: take or renew the lease, read after the checkpoint, seal, maybe sign.
   * `more`: a full batch was sealed; `idle`: caught up; `hidden`: newer events are not yet readable;
   * `standby`: another notary holds the lease.
   *
   * While catching up, batches overlap: the next one is read while this one is hashed, and hashed
   * while this one is written. Each write moves the tree from the size the one before left by
   * compare-and-set, so a lost lease fails every write after it, and the tree is loaded again.
   */
  async step(): Promise<'more' | 'idle' | 'hidden' | 'standby'> {
    let s = this.sealing
    if (!s || Date.now() - s.renewedAt >= this.leaseMs / 3) {
      if (!await this.settle()) return 'standby'
      s = await this.acquire()
    }
    if (!s) return 'standby'
    const { events, checkpoint } = await this.read(s.checkpoint)
    if (events.length === this.batchSize) {
      const result = this.store.readAll(checkpoint, this.batchSize)
      result.catch(() => undefined) // read again, and failed then, if this batch is not sealed
      this.prefetch = { from: checkpoint, result }
    }
    const now = Date.now()
    if (events.length === 0) {
      if (!await this.settle()) return 'standby'
      if (this.headDue(s, s.treeSize, now)) {
        if (this.opts.witnessing) await this.witnessed(this.opts.witnessing, s, s.range, now)
        else {
          const signed = await this.signWithMap(s.range, s, now)
          if (!signed) return 'standby'
          this.write(s, s.range, [], [], [], s.checkpoint, signed.head, signed.map)
        }
      }
      if (!await this.settle()) return 'standby'
      const head = await this.store.headPosition()
      return this.store.comparePositions(head, s.checkpoint) > 0 ? 'hidden' : 'idle'
    }
    const range = s.range.clone()
    const leaves: LeafRow[] = []
    const nodes: { node: NodeId; hash: Buffer }[] = []
    for (const e of events) {
      const leafHash = sealedLeafHash(e)
      s.map?.dirty.set(e.streamId, { leafIndex: range.size, streamVersion: e.streamVersion })
      leaves.push({ leafIndex: range.size, eventId: e.id, streamId: e.streamId, streamVersion: e.streamVersion, leafHash })
      range.append(leafHash, (node, hash) => nodes.push({ node, hash }))
    }
    const due = this.headDue(s, range.size, now)
    if (due && !this.opts.witnessing) {
      const signed = await this.signWithMap(range, s, now)
      if (!signed) return 'standby'
      this.write(s, range, events, leaves, nodes, checkpoint, signed.head, signed.map)
    } else {
      this.write(s, range, events, leaves, nodes, checkpoint, undefined)
    }
    if (due && this.opts.witnessing) await this.witnessed(this.opts.witnessing, s, range, now)
    if (events.length === this.batchSize) return 'more'
    return await this.settle() ? 'idle' : 'standby'
  }

  /**
   * With witnesses: the leaves written first, then the head's checkpoint cosigned by every witness,
   * then the head stored; a refusal throws and nothing is signed into the tables.
   */
  private async witnessed(witnessing: Witnessing, s: Sealing, range: CompactRange, now: number): Promise<void> {
    if (!await this.settle()) return
    const signed = await this.signWithMap(range, s, now)
    if (!signed) return
    const { head } = signed
    const note = await witnessing.cosign(this.db, head)
    // Cosigned: the head and its stream map's head land together (fenced by the lease), then the note.
    this.write(s, range, [], [], [], s.checkpoint, head, signed.map)
    if (!await this.settle()) return
    if (!await storeWitnessedHead(this.db, { name: this.name, owner: this.owner }, head, note)) return
    s.signedSize = head.treeSize
    s.signedAt = head.timestamp
    this.headWanted = false
  }

  private async read(from: string): Promise<ReadAllResult> {
    const prefetched = this.prefetch?.from === from ? this.prefetch.result : undefined
    this.prefetch = undefined
    return prefetched ?? this.store.readAll(from, this.batchSize)
  }

  /**
   * Queues the batch's write (leaves, subtrees, head, checkpoint: one statement) after the one in
   * flight, and moves this notary's state on at once; settle() learns whether it held.
   */
  private write(s: Sealing, range: CompactRange, events: RecordedEvent[], leaves: LeafRow[], nodes: { node: NodeId; hash: Buffer }[], checkpoint: string, head: SignedHead | undefined, map?: MapCommit): void {
    const move = { name: this.name, owner: this.owner, leaseMs: this.leaseMs, from: s.treeSize, to: range.size, checkpoint }
    const before = this.inFlight
    this.inFlight = (async () => {
      if (before && await before !== true) return false
      const moved = await sealBatch(this.db, move, leaves, nodes, head, map)
      if (moved) {
        s.renewedAt = Date.now()
        if (events.length > 0) this.opts.onSealed?.(events, range.size)
      }
      return moved
    })().catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))))
    s.treeSize = range.size
    s.range = range
    s.checkpoint = checkpoint
    if (head) {
      s.signedSize = head.treeSize
      s.signedAt = head.timestamp
      this.headWanted = false
    }
  }

  /** Waits for the writes in flight: true when they all held; a lost lease or a failure forgets the state. */
  private async settle(): Promise<boolean> {
    const pending = this.inFlight
    if (!pending) return true
    const outcome = await pending
    if (this.inFlight === pending) this.inFlight = undefined
    if (outcome === true) return true
    this.sealing = undefined
    this.prefetch = undefined
    if (outcome instanceof Error) throw outcome
    this.logger.warn({ notary: this.name }, 'notary lost its lease during a batch; the new owner seals it')
    return false
  }

  /** Takes the lease if free or lapsed, renews it if ours; on taking it, loads the tree's edge and checks it against the last head. */
  private async acquire(): Promise<Sealing | undefined> {
    const now = Date.now()
    const row = await acquireNotaryLease(this.db, this.name, this.owner, this.leaseMs, this.store.startPosition)
    if (!row) {
      // Every standby says so once per holder: a lease taken by hand (or a process that seals
      // nothing) must show in the log, not only in the lag.
      const holder = await leaseHolder(this.db, this.name).catch(() => undefined)
      const owner = holder?.owner ?? null
      if (this.sealing || this.standingBy !== owner) {
        this.standbys++
        this.logger.warn({ notary: this.name, holder: owner, lease_until: holder?.leaseUntil ?? null, standbys: this.standbys },
          this.sealing ? 'notary lease taken by another process: standing by' : 'notary standing by: another process holds the lease')
      }
      this.standingBy = owner
      this.sealing = undefined
      return undefined
    }
    this.standingBy = undefined
    const held = this.sealing
    if (held && held.treeSize === row.treeSize && held.checkpoint === row.checkpoint) {
      held.renewedAt = now
      return held
    }
    const edge = perfectSubtrees({ begin: 0, end: row.treeSize })
    const found = await nodeHashes(this.db, edge)
    const hashes = edge.map((n) => {
      const h = found.get(nodeKey(n))
      if (!h) throw new TamperedTreeError(`the stored tree of ${row.treeSize} leaves lacks its subtree ${nodeKey(n)}`)
      return h
    })
    const range = CompactRange.of(row.treeSize, hashes)
    const last = await latestHead(this.db)
    if (last) {
      const root = last.treeSize === row.treeSize ? range.root() : await rootAt(this.db, last.treeSize)
      if (!root.equals(last.rootHash)) throw new TamperedTreeError(`the stored tree's root at ${last.treeSize} is not the signed one`)
    }
    if (last && last.keyId !== this.key.keyId) {
      this.logger.error({ notary: this.name, signed_with: last.keyId, signing_with: this.key.keyId }, 'notary signs with another key than the last head: processes must share NOTARY_KEY')
    }
    const map = this.opts.streamMap === false ? undefined : await loadMapState(this.db)
    if (typeof map === 'string') throw new TamperedTreeError(map)
    this.sealing = { treeSize: row.treeSize, checkpoint: row.checkpoint, range, signedSize: last?.treeSize ?? -1, signedAt: last?.timestamp ?? 0, renewedAt: now, map }
    this.logger.info({ notary: this.name, owner: this.owner, tree_size: row.treeSize }, 'notary active')
    return this.sealing
  }
}
