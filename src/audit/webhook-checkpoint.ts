import { type Kysely, sql } from 'kysely'
import type { NotaryKey } from './tree-head.js'
import { latestCheckpoint } from './latest-checkpoint.js'

/** What a signed webhook carries of the audit log (docs/decisions.md "Checkpoints on webhooks"). */
export interface AuditHeaders {
  /** The latest checkpoint note (with any cosignatures), base64: a header holds no newline. */
  'audit-checkpoint'?: string
  /** The leaf of the webhook's event in that checkpoint's tree, once sealed into it. */
  'audit-leaf-index'?: string
}

/**
 * Makes every counter-party a witness for free: the webhook sender reads the latest checkpoint
 * (at most once a second) and the leaves of the events a batch of webhooks is about (one query).
 */
export class WebhookCheckpoints {
  private cached: { at: number; size: number; header: string } | undefined

  constructor(private readonly db: Kysely<any>, private readonly key: NotaryKey | (() => NotaryKey), private readonly origin: string, private readonly maxAgeMs = 1000) {}

  private async latest(): Promise<{ size: number; header: string } | undefined> {
    if (this.cached && Date.now() - this.cached.at < this.maxAgeMs) return this.cached
    // NOTARY_ROLE=off without the key: webhooks go without checkpoints rather than not at all.
    let key: NotaryKey
    try { key = typeof this.key === 'function' ? this.key() : this.key } catch { return undefined }
    const c = await latestCheckpoint(this.db, key, this.origin)
    this.cached = c ? { at: Date.now(), size: c.size, header: Buffer.from(c.note).toString('base64') } : undefined
    return this.cached
  }

  /** The headers of each source event's webhook; none at all before any head was signed. */
  async headersFor(eventIds: string[]): Promise<(id: string | null) => AuditHeaders> {
    const latest = await this.latest()
    if (!latest) return () => ({})
    const ids = [...new Set(eventIds)].filter((id) => /^[0-9a-f-]{36}$/i.test(id))
    const leaves = new Map<string, number>()
    if (ids.length > 0) {
      const r = await sql<{ event_id: string; leaf_index: string | number }>`
        select event_id::text as event_id, leaf_index from audit_leaves where event_id = any(${ids}::uuid[]) and leaf_index < ${latest.size}`.execute(this.db)
      for (const row of r.rows) leaves.set(row.event_id, Number(row.leaf_index))
    }
    return (id) => {
      const leaf = id === null ? undefined : leaves.get(id)
      return { 'audit-checkpoint': latest.header, ...(leaf !== undefined ? { 'audit-leaf-index': String(leaf) } : {}) }
    }
  }
}
