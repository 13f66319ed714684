import { createHash } from 'node:crypto'
import { hashChildren } from './merkle.js'

/**
 * The stream map (issue 36, docs/decisions.md "Complete histories"): stream → (its last leaf, its
 * version) as of a tree size, a Merkle tree of fixed depth over 2^16 buckets. A stream's key is
 * SHA-256 of its id; its bucket the key's first two bytes. An entry is SHA-256(0x03 ‖ key ‖ uint64
 * leaf index ‖ uint64 stream version); a bucket's hash SHA-256(0x04 ‖ its entries in ascending
 * order); a node above hashChildren(left, right) of RFC 9162 (0x01). A proof is the bucket's entries
 * (opaque hashes: nothing of another stream shows but their number) and the 16 siblings on the way
 * up. With each tree head the notary signs a map head (map-head.ts) binding the tree's size and root
 * to the map's root, so a history proves "this stream had exactly k events, the last at leaf L, as
 * of head N". No I/O.
 */
export const MAP_DEPTH = 16
const BUCKETS = 2 ** MAP_DEPTH
const ENTRY = Buffer.from([0x03])
const BUCKET = Buffer.from([0x04])

export const streamKey = (streamId: string): Buffer => createHash('sha256').update(streamId, 'utf8').digest()
export const bucketOf = (streamId: string): number => streamKey(streamId).readUInt16BE(0)

export interface StreamTip { leafIndex: number; streamVersion: number }

export function entryHash(streamId: string, tip: StreamTip): Buffer {
  const nums = Buffer.alloc(16)
  nums.writeBigUInt64BE(BigInt(tip.leafIndex), 0)
  nums.writeBigUInt64BE(BigInt(tip.streamVersion), 8)
  return createHash('sha256').update(ENTRY).update(streamKey(streamId)).update(nums).digest()
}

export function bucketHash(entries: Buffer[]): Buffer {
  const h = createHash('sha256').update(BUCKET)
  for (const e of [...entries].sort(Buffer.compare)) h.update(e)
  return h.digest()
}

/** The hash of an empty subtree at each level (0: an empty bucket). */
const EMPTY: Buffer[] = (() => {
  const out = [bucketHash([])]
  for (let l = 1; l <= MAP_DEPTH; l++) out.push(hashChildren(out[l - 1]!, out[l - 1]!))
  return out
})()

export interface MapNode { level: number; index: number; hash: Buffer }

/** Every node of the map, sparse (absent: empty); updated bucket by bucket. */
export class MapTree {
  private readonly levels: Map<number, Buffer>[] = Array.from({ length: MAP_DEPTH + 1 }, () => new Map())

  static of(nodes: MapNode[]): MapTree {
    const t = new MapTree()
    for (const n of nodes) t.levels[n.level]!.set(n.index, n.hash)
    return t
  }

  node(level: number, index: number): Buffer { return this.levels[level]!.get(index) ?? EMPTY[level]! }

  root(): Buffer { return this.node(MAP_DEPTH, 0) }

  /** Sets buckets' hashes and recomputes the nodes above them; returns every node that changed. */
  setBuckets(buckets: Map<number, Buffer>): MapNode[] {
    const changed: MapNode[] = []
    let dirty = new Set<number>()
    for (const [b, hash] of buckets) {
      if (!(b >= 0 && b < BUCKETS)) throw new RangeError(`no bucket ${b}`)
      this.levels[0]!.set(b, hash)
      changed.push({ level: 0, index: b, hash })
      dirty.add(b >> 1)
    }
    for (let level = 1; level <= MAP_DEPTH; level++) {
      const next = new Set<number>()
      for (const i of dirty) {
        const hash = hashChildren(this.node(level - 1, 2 * i), this.node(level - 1, 2 * i + 1))
        this.levels[level]!.set(i, hash)
        changed.push({ level, index: i, hash })
        next.add(i >> 1)
      }
      dirty = next
    }
    return changed
  }

  /** The siblings from the bucket up (the bucket's sibling first). */
  path(bucket: number): Buffer[] {
    const out: Buffer[] = []
    for (let level = 0, i = bucket; level < MAP_DEPTH; level++, i >>= 1) out.push(this.node(level, i ^ 1))
    return out
  }
}

/** The nodes a proof of this bucket needs: its siblings on the way up. */
export const pathNodes = (bucket: number): { level: number; index: number }[] =>
  Array.from({ length: MAP_DEPTH }, (_, level) => ({ level, index: (bucket >> level) ^ 1 }))

export const emptyNode = (level: number): Buffer => EMPTY[level]!

/** The map's root from one bucket's entries and its path (undefined: malformed). */
export function rootFromBucket(bucket: number, entries: Buffer[], path: Buffer[]): Buffer | undefined {
  if (path.length !== MAP_DEPTH || !(bucket >= 0 && bucket < BUCKETS)) return undefined
  let h = bucketHash(entries)
  for (let level = 0, i = bucket; level < MAP_DEPTH; level++, i >>= 1) {
    h = i % 2 === 0 ? hashChildren(h, path[level]!) : hashChildren(path[level]!, h)
  }
  return h
}

/**
 * The whole map in memory, from leaves in tree order (`audit-log check` recomputes every committed
 * root from the sealed leaves).
 */
export class MemoryStreamMap {
  private readonly tips = new Map<string, StreamTip>()
  private readonly byBucket = new Map<number, Map<string, Buffer>>()
  private readonly dirty = new Set<string>()
  private readonly tree = new MapTree()

  add(streamId: string, tip: StreamTip): void {
    this.tips.set(streamId, tip)
    this.dirty.add(streamId)
  }

  tip(streamId: string): StreamTip | undefined { return this.tips.get(streamId) }

  /** The root over every tip added so far. */
  root(): Buffer {
    const buckets = new Map<number, Buffer>()
    const touched = new Set<number>()
    for (const s of this.dirty) {
      const b = bucketOf(s)
      const entries = this.byBucket.get(b) ?? this.byBucket.set(b, new Map()).get(b)!
      entries.set(s, entryHash(s, this.tips.get(s)!))
      touched.add(b)
    }
    this.dirty.clear()
    for (const b of touched) buckets.set(b, bucketHash([...this.byBucket.get(b)!.values()]))
    this.tree.setBuckets(buckets)
    return this.tree.root()
  }

  node(level: number, index: number): Buffer { return this.tree.node(level, index) }
}
