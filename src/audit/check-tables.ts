import type { KeyObject } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import type { CheckFinding } from './check-finding.js'
import { mapHeadSignatureHolds } from './map-head.js'
import { allMapHeads, isStoredLevel, storedMapNodes } from './map-store.js'
import { CompactRange } from './merkle.js'
import { entryHash, MemoryStreamMap } from './stream-map.js'
import type { LeafRow } from './tree-store.js'

/** `audit-log check` on the notary's own tables: its stored subtrees and its stream map, recomputed from the sealed leaves. */

const NAMED = 20
const named = (findings: CheckFinding[], kind: CheckFinding['kind'], what: string): CheckFinding[] =>
  findings.length <= NAMED ? findings : [...findings.slice(0, NAMED), { kind, subject: `${findings.length - NAMED} more ${what}`, detail: 'altered as well' }]

/**
 * Every complete subtree of the sealed leaves against `audit_tree_nodes`: proofs and the notary's
 * restart read these, so an altered one would make a proof fail or the notary refuse, never pass
 * unnoticed; the check names it.
 */
export async function subtreeFindings(db: Kysely<any>, leaves: LeafRow[]): Promise<CheckFinding[]> {
  const expected = new Map<string, Buffer>()
  const range = CompactRange.empty()
  for (const [i, leaf] of leaves.entries()) {
    if (leaf.leafIndex !== i) break // a gap: reported as a tree finding
    range.append(leaf.leafHash, (node, hash) => expected.set(`${node.level}/${node.index}`, hash))
  }
  const r = await sql<{ level: number; node_index: number | string; hash: Uint8Array }>`select level, node_index, hash from audit_tree_nodes`.execute(db)
  const findings: CheckFinding[] = []
  const seen = new Set<string>()
  for (const row of r.rows) {
    const key = `${row.level}/${row.node_index}`
    seen.add(key)
    const want = expected.get(key)
    const span = `leaves ${Number(row.node_index) * 2 ** row.level}–${(Number(row.node_index) + 1) * 2 ** row.level - 1}`
    if (!want) findings.push({ kind: 'subtree', subject: `subtree ${key}`, detail: `stored, but its ${span} are not all sealed` })
    else if (!want.equals(Buffer.from(row.hash))) findings.push({ kind: 'subtree', subject: `subtree ${key}`, detail: `its stored hash is not the hash of its ${span}: the subtree table was altered` })
  }
  for (const key of expected.keys()) if (!seen.has(key)) findings.push({ kind: 'subtree', subject: `subtree ${key}`, detail: 'missing from the subtree table' })
  return named(findings, 'subtree', 'subtrees')
}

/**
 * The stream map recomputed from the sealed leaves: every signed map head's root (and signature),
 * and the stored buckets, nodes and tips as of the latest one.
 */
export async function mapFindings(db: Kysely<any>, leaves: LeafRow[], publicKey: KeyObject | undefined, opts: { wrongKey?: boolean } = {}): Promise<CheckFinding[]> {
  const heads = await allMapHeads(db)
  const findings: CheckFinding[] = []
  const map = new MemoryStreamMap()
  let next = 0
  for (const head of heads) {
    if (head.treeSize > leaves.length) {
      findings.push({ kind: 'map', subject: `stream map head ${head.treeSize}`, detail: `signed over ${head.treeSize} leaves, but only ${leaves.length} are stored` })
      return findings
    }
    for (; next < head.treeSize; next++) map.add(leaves[next]!.streamId, { leafIndex: leaves[next]!.leafIndex, streamVersion: leaves[next]!.streamVersion })
    if (!map.root().equals(head.mapRoot)) findings.push({ kind: 'map', subject: `stream map head ${head.treeSize}`, detail: 'the sealed leaves no longer give its signed stream map root' })
    // Under a key no tree head verifies with, the one `key` finding says it: not one per map head.
    if (publicKey && !opts.wrongKey && !mapHeadSignatureHolds(head, head.signature, publicKey)) findings.push({ kind: 'signature', subject: `stream map head ${head.treeSize}`, detail: 'its signature does not hold under the notary\'s public key' })
  }
  if (heads.length === 0) return findings
  const stored: CheckFinding[] = []
  for (const n of await storedMapNodes(db)) {
    if (isStoredLevel(n.level) && !map.node(n.level, n.index).equals(n.hash)) {
      stored.push({ kind: 'map', subject: `stream map node ${n.level}/${n.index}`, detail: 'its stored hash is not the one the sealed leaves give: the map table was altered' })
    }
  }
  const tips = await sql<{ stream_id: string; leaf_index: number | string; stream_version: number | string; entry: Uint8Array }>`
    select stream_id, leaf_index, stream_version, entry from audit_stream_tips`.execute(db)
  for (const t of tips.rows) {
    const tip = map.tip(t.stream_id)
    if (!tip || tip.leafIndex !== Number(t.leaf_index) || tip.streamVersion !== Number(t.stream_version) || !entryHash(t.stream_id, tip).equals(Buffer.from(t.entry))) {
      stored.push({ kind: 'map', subject: `stream ${t.stream_id}`, detail: `its stored map entry (v${t.stream_version} at leaf ${t.leaf_index}) is not its last sealed leaf as of the latest map head${tip ? ` (v${tip.streamVersion} at leaf ${tip.leafIndex})` : ''}` })
    }
  }
  return [...findings, ...named(stored, 'map', 'map entries')]
}
