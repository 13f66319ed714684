import { createHash } from 'node:crypto'

/**
 * The Merkle tree of RFC 9162 §2.1 (the same as RFC 6962's): SHA-256, a leaf hashed with the
 * prefix 0x00 and an interior node with 0x01, so that no leaf can pass for a node. No I/O: the
 * notary, the proof queries, `audit-log check` and the offline verifier share it.
 */
export const HASH_BYTES = 32
const LEAF_PREFIX = Buffer.from([0])
const NODE_PREFIX = Buffer.from([1])

export const hashLeaf = (leaf: Uint8Array): Buffer => createHash('sha256').update(LEAF_PREFIX).update(leaf).digest()
export const hashChildren = (left: Uint8Array, right: Uint8Array): Buffer =>
  createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest()
/** MTH({}): the hash of the empty string. */
export const emptyRoot = (): Buffer => createHash('sha256').digest()

/** A perfect subtree: the 2^level leaves from index·2^level on. Level 0 is a leaf. */
export interface NodeId { level: number; index: number }
/** Leaves [begin, end). */
export interface Range { begin: number; end: number }

/** The largest power of two below n (n ≥ 2): RFC 9162's k. */
export function splitPoint(n: number): number {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

/**
 * The perfect subtrees that make up [begin, end), left to right, each the largest aligned one that
 * fits. For the ranges RFC 9162's recursion produces (begin aligned to the range's size rounded up
 * to a power of two), the tree hash of the range is these hashes folded from the right.
 */
export function perfectSubtrees({ begin, end }: Range): NodeId[] {
  const out: NodeId[] = []
  let at = begin
  while (at < end) {
    let size = 1
    let level = 0
    while (at % (size * 2) === 0 && at + size * 2 <= end) { size *= 2; level++ }
    out.push({ level, index: at / size })
    at += size
  }
  return out
}

/** MTH of a range from the hashes of its perfect subtrees (`hashOf` answers for each of perfectSubtrees(range)). */
export function rangeHash(range: Range, hashOf: (node: NodeId) => Buffer): Buffer {
  const nodes = perfectSubtrees(range)
  if (nodes.length === 0) return emptyRoot()
  let h = hashOf(nodes[nodes.length - 1]!)
  for (let i = nodes.length - 2; i >= 0; i--) h = hashChildren(hashOf(nodes[i]!), h)
  return h
}

/**
 * The subtrees whose hashes form PATH(index, D[size]) (RFC 9162 §2.1.3.1), in the path's order
 * (the leaf's sibling first): ⌈log2 size⌉ of them at most.
 */
export function inclusionRanges(index: number, size: number): Range[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is not in a tree of ${size}`)
  const topDown: Range[] = []
  let begin = 0
  let end = size
  while (end - begin > 1) {
    const k = splitPoint(end - begin)
    if (index < begin + k) { topDown.push({ begin: begin + k, end }); end = begin + k } else { topDown.push({ begin, end: begin + k }); begin += k }
  }
  return topDown.reverse()
}

/**
 * The subtrees whose hashes form PROOF(first, D[second]) (RFC 9162 §2.1.4.1, SUBPROOF with
 * b = true), in the proof's order. Empty when first is 0 or equals second.
 */
export function consistencyRanges(first: number, second: number): Range[] {
  if (!(first >= 0 && first <= second)) throw new RangeError(`no consistency proof from ${first} to ${second}`)
  if (first === 0 || first === second) return []
  const topDown: Range[] = []
  let begin = 0
  let end = second
  let whole = true
  for (;;) {
    const m = first - begin
    if (m === end - begin) {
      if (!whole) topDown.push({ begin, end })
      break
    }
    const k = splitPoint(end - begin)
    if (m <= k) { topDown.push({ begin: begin + k, end }); end = begin + k } else { topDown.push({ begin, end: begin + k }); begin += k; whole = false }
  }
  return topDown.reverse()
}

/**
 * The right edge of a growing tree: the hashes of the perfect subtrees of [0, size), largest first
 * (at most log2 size of them). Appending a leaf merges equal-sized subtrees and reports each
 * completed node, which is what the notary stores; the root is the hashes folded from the right.
 */
export class CompactRange {
  private constructor(private treeSize: number, private readonly hashes: Buffer[]) {}

  static empty(): CompactRange { return new CompactRange(0, []) }

  /** From the hashes of perfectSubtrees({0, size}), in that order. */
  static of(size: number, hashes: Buffer[]): CompactRange {
    const expected = perfectSubtrees({ begin: 0, end: size }).length
    if (hashes.length !== expected) throw new Error(`a tree of ${size} leaves has ${expected} edge subtrees, got ${hashes.length}`)
    return new CompactRange(size, [...hashes])
  }

  get size(): number { return this.treeSize }

  /** Appends a leaf hash; `completed` hears of every interior node it completes (level ≥ 1). */
  append(leafHash: Buffer, completed?: (node: NodeId, hash: Buffer) => void): void {
    let h = leafHash
    let index = this.treeSize
    let level = 0
    let s = this.treeSize
    while (s % 2 === 1) {
      h = hashChildren(this.hashes.pop()!, h)
      level++
      index = Math.floor(index / 2)
      s = Math.floor(s / 2)
      completed?.({ level, index }, h)
    }
    this.hashes.push(h)
    this.treeSize++
  }

  root(): Buffer {
    if (this.hashes.length === 0) return emptyRoot()
    let h = this.hashes[this.hashes.length - 1]!
    for (let i = this.hashes.length - 2; i >= 0; i--) h = hashChildren(this.hashes[i]!, h)
    return h
  }

  clone(): CompactRange { return new CompactRange(this.treeSize, [...this.hashes]) }
}

/** MTH(D[n]) of every leaf hash at once (RFC 9162 §2.1.1), for tests and the offline check. */
export function rootOf(leafHashes: Buffer[]): Buffer {
  const range = CompactRange.empty()
  for (const h of leafHashes) range.append(h)
  return range.root()
}
