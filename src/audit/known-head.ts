import type { KeyObject } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import { type Checkpoint, logVerifierKey, openCheckpoint, parseCheckpointText } from './checkpoint-note.js'
import { CompactRange } from './merkle.js'
import { verifyConsistency } from './merkle-verify.js'
import { parseNote } from './signed-note.js'
import { leavesFrom } from './tree-store.js'
import { messageOf } from '../shared/thrown.js'

/**
 * What an auditor (or a webhook receiver) kept: checkpoints the log signed. Any later tree must
 * extend each of them (RFC 9162 consistency); one that does not is a rewritten log, whatever the
 * log's own tables say.
 */

/** A kept checkpoint note, its log signature checked with the notary's public key under the origin it names. */
export function openKnownHead(note: string, publicKey: KeyObject): Checkpoint {
  const { origin } = parseCheckpointText(parseNote(note).text)
  return openCheckpoint(note, logVerifierKey(origin, publicKey)).checkpoint
}

const b64 = (b: Buffer) => b.toString('base64')

/**
 * Why the tree of `size` leaves with root `root` does not extend the kept checkpoint, or undefined
 * when it does. `proof`: PROOF(known.size, D[size]); undefined when none could be had.
 */
export function knownHeadProblem(known: Checkpoint, size: number, root: Buffer, proof: Buffer[] | undefined): string | undefined {
  if (size < known.size) return `the tree has ${size} leaves, fewer than the ${known.size} of the checkpoint kept: the log was rolled back`
  if (size === known.size) {
    return root.equals(known.rootHash) ? undefined
      : `two signed trees of ${size} leaves with different roots (kept ${b64(known.rootHash)}, now ${b64(root)}): the log was rewritten`
  }
  if (!proof) return `no consistency proof from the kept checkpoint (size ${known.size}) to the tree of ${size}: it is not shown to extend it`
  const failure = verifyConsistency(known.size, size, proof, known.rootHash, root)
  return failure === undefined ? undefined
    : `the tree of ${size} leaves does not extend the checkpoint of ${known.size} kept (root ${b64(known.rootHash)}): ${failure}; the log was rewritten`
}

/** Every checkpoint note in a directory (a webhook sink's, an auditor's), by file; unreadable ones are reported, not skipped. */
export function readKnownHeads(dir: string, publicKey: KeyObject): { file: string; checkpoint?: Checkpoint; problem?: string }[] {
  return readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile()).sort().map((f) => {
    const file = join(dir, f)
    try {
      return { file, checkpoint: openKnownHead(readFileSync(file, 'utf8'), publicKey) }
    } catch (err) {
      return { file, problem: `not a checkpoint this log signed: ${messageOf(err)}` }
    }
  })
}

/** Each kept checkpoint against the stored leaves: the root of their first `size` must be the kept one. */
export async function storedTreeAgainst(db: Kysely<any>, known: Checkpoint[], pageSize = 5000): Promise<{ checkpoint: Checkpoint; problem: string }[]> {
  const wanted = [...new Set(known.map((c) => c.size))].sort((a, b) => a - b)
  const roots = new Map<number, Buffer>()
  const range = CompactRange.empty()
  if (wanted.includes(0)) roots.set(0, range.root())
  let next = 0
  outer: for (let from = 0; wanted.length > roots.size; ) {
    const page = await leavesFrom(db, from, pageSize)
    for (const leaf of page) {
      if (leaf.leafIndex !== next) break outer
      range.append(leaf.leafHash)
      next++
      if (wanted.includes(range.size)) roots.set(range.size, range.root())
    }
    if (page.length < pageSize) break
    from = next
  }
  return known.flatMap((c) => {
    const root = roots.get(c.size)
    const problem = root ? knownHeadProblem(c, c.size, root, []) : `the sealed leaves stop at ${next}, before the ${c.size} of the checkpoint kept: the audit tables were rolled back or cut`
    return problem ? [{ checkpoint: c, problem }] : []
  })
}
