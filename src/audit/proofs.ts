import type { Kysely } from 'kysely'
import { consistencyRanges, inclusionRanges, type NodeId, perfectSubtrees, type Range, rangeHash } from './merkle.js'
import { nodeHashes, nodeKey } from './tree-store.js'

/** The stored tree lacks a subtree a proof needs: the tables were edited (or the size is past the tree). */
export class MissingSubtreeError extends Error {}

/** Each range's hash from the stored subtrees, all fetched in one query. */
async function hashesOf(db: Kysely<any>, rangeLists: Range[][]): Promise<Buffer[][]> {
  const needed: NodeId[] = rangeLists.flatMap((ranges) => ranges.flatMap(perfectSubtrees))
  const found = await nodeHashes(db, needed)
  const hashOf = (node: NodeId) => {
    const h = found.get(nodeKey(node))
    if (!h) throw new MissingSubtreeError(`the stored tree has no subtree ${nodeKey(node)}`)
    return h
  }
  return rangeLists.map((ranges) => ranges.map((r) => rangeHash(r, hashOf)))
}

/** Inclusion proofs of several leaves in the tree of `size` leaves (RFC 9162 §2.1.3.1), in one query. */
export const inclusionProofs = (db: Kysely<any>, indices: number[], size: number): Promise<Buffer[][]> =>
  hashesOf(db, indices.map((i) => inclusionRanges(i, size)))

/** PROOF(first, D[second]) (RFC 9162 §2.1.4.1). */
export const consistencyProof = async (db: Kysely<any>, first: number, second: number): Promise<Buffer[]> =>
  (await hashesOf(db, [consistencyRanges(first, second)]))[0]!

/** The root of the stored tree at any size up to the sealed one. */
export const rootAt = async (db: Kysely<any>, size: number): Promise<Buffer> =>
  (await hashesOf(db, [[{ begin: 0, end: size }]]))[0]![0]!
