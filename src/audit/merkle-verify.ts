import { HASH_BYTES, hashChildren } from './merkle.js'

/** Why a proof does not hold, in words an auditor can act on; undefined when it holds. */
export type ProofFailure = string | undefined

const isHash = (h: Uint8Array) => h.length === HASH_BYTES
const odd = (n: number) => n % 2 === 1
const half = (n: number) => Math.floor(n / 2)
const isPowerOfTwo = (n: number) => {
  let m = n
  while (m > 1 && m % 2 === 0) m /= 2
  return m === 1
}

/**
 * The root an inclusion proof leads to (RFC 9162 §2.1.3.2), or the reason it cannot lead to any.
 * Sizes and indices are whole numbers below 2^53.
 */
export function rootFromInclusion(index: number, size: number, leafHash: Uint8Array, path: Uint8Array[]): Buffer | { failure: string } {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0) return { failure: 'the leaf index is not a whole number' }
  if (index >= size) return { failure: `leaf ${index} is not in a tree of ${size}` }
  if (!isHash(leafHash) || !path.every(isHash)) return { failure: 'a hash is not 32 bytes' }
  let fn = index
  let sn = size - 1
  let r: Buffer = Buffer.from(leafHash)
  for (const p of path) {
    if (sn === 0) return { failure: 'the path is longer than the tree is deep' }
    if (odd(fn) || fn === sn) {
      r = hashChildren(p, r)
      if (!odd(fn)) while (!odd(fn) && fn !== 0) { fn = half(fn); sn = half(sn) }
    } else {
      r = hashChildren(r, p)
    }
    fn = half(fn)
    sn = half(sn)
  }
  if (sn !== 0) return { failure: 'the path is shorter than the tree is deep' }
  return r
}

export function verifyInclusion(index: number, size: number, leafHash: Uint8Array, path: Uint8Array[], root: Uint8Array): ProofFailure {
  const r = rootFromInclusion(index, size, leafHash, path)
  if (!Buffer.isBuffer(r)) return r.failure
  return r.equals(root) ? undefined : 'the path does not lead to the signed root'
}

/**
 * RFC 9162 §2.1.4.2: the tree of `first` leaves with root `firstRoot` is a prefix of the tree of
 * `second` leaves with root `secondRoot`. Equal sizes need equal roots and an empty proof; from the
 * empty tree anything follows (an empty proof).
 */
export function verifyConsistency(first: number, second: number, proof: Uint8Array[], firstRoot: Uint8Array, secondRoot: Uint8Array): ProofFailure {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0) return 'a size is not a whole number'
  if (first > second) return `the first tree (${first}) is larger than the second (${second})`
  if (!proof.every(isHash) || !isHash(firstRoot) || !isHash(secondRoot)) return 'a hash is not 32 bytes'
  if (first === second) {
    if (proof.length > 0) return 'trees of one size need an empty proof'
    return Buffer.from(firstRoot).equals(secondRoot) ? undefined : 'two trees of one size with different roots'
  }
  if (first === 0) return proof.length === 0 ? undefined : 'a proof from the empty tree must be empty'
  if (proof.length === 0) return 'the proof is empty'
  let path = proof.map((p) => Buffer.from(p))
  // A first tree that is a perfect subtree of the second is its own first node.
  if (isPowerOfTwo(first)) path = [Buffer.from(firstRoot), ...path]
  let fn = first - 1
  let sn = second - 1
  while (odd(fn)) { fn = half(fn); sn = half(sn) }
  let fr: Buffer = path[0]!
  let sr: Buffer = path[0]!
  for (const c of path.slice(1)) {
    if (sn === 0) return 'the proof is longer than the tree is deep'
    if (odd(fn) || fn === sn) {
      fr = hashChildren(c, fr)
      sr = hashChildren(c, sr)
      if (!odd(fn)) while (!odd(fn) && fn !== 0) { fn = half(fn); sn = half(sn) }
    } else {
      sr = hashChildren(sr, c)
    }
    fn = half(fn)
    sn = half(sn)
  }
  if (sn !== 0) return 'the proof is shorter than the tree is deep'
  if (!fr.equals(firstRoot)) return 'the proof does not lead to the first root'
  if (!sr.equals(secondRoot)) return 'the proof does not lead to the second root'
  return undefined
}
