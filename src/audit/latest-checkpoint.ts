import { type Kysely, sql } from 'kysely'
import { checkpointNoteOf, logVerifierKey, openCheckpoint } from './checkpoint-note.js'
import type { NotaryKey } from './tree-head.js'

export interface LatestCheckpoint {
  size: number
  /** The checkpoint note: the log's signature, then the witnesses' cosignatures when it has them. */
  note: string
  cosigned: boolean
}

type Row = { tree_size: number | string; root_hash: Uint8Array; timestamp_ms: number | string; signature: Uint8Array; key_id: string; checkpoint: string | null }

/**
 * The latest signed head as a checkpoint note: the cosigned one the notary stored beside it (when
 * its log signature holds and it names the same tree), else the head signed as a note now.
 * Undefined before any head, or when the latest head is not this key's.
 */
export async function latestCheckpoint(db: Kysely<any>, key: NotaryKey, origin: string): Promise<LatestCheckpoint | undefined> {
  const r = await sql<Row>`
    select h.tree_size, h.root_hash, h.timestamp_ms, h.signature, h.key_id, c.checkpoint
    from audit_tree_heads h left join audit_checkpoints c on c.tree_size = h.tree_size
    order by h.tree_size desc limit 1`.execute(db)
  const row = r.rows[0]
  if (!row) return undefined
  const head = { treeSize: Number(row.tree_size), rootHash: Buffer.from(row.root_hash), timestamp: Number(row.timestamp_ms), signature: Buffer.from(row.signature), keyId: row.key_id }
  if (row.checkpoint) {
    try {
      const { checkpoint } = openCheckpoint(row.checkpoint, logVerifierKey(origin, key.publicKey))
      if (checkpoint.size === head.treeSize && checkpoint.rootHash.equals(head.rootHash)) return { size: head.treeSize, note: row.checkpoint, cosigned: true }
    } catch { /* not ours: fall back to the head itself */ }
  }
  try {
    return { size: head.treeSize, note: checkpointNoteOf(head, key, origin), cosigned: false }
  } catch {
    return undefined
  }
}
