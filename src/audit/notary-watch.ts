import { type Kysely, sql } from 'kysely'

/**
 * What anyone can read of the notary from the database (issue 36: it must not stall unseen): who
 * holds its lease, how far it sealed, how old its last head is, how often it refused, and how far
 * the log ran ahead of it. Every process answers from these, whichever one seals.
 */
export interface NotaryFigures {
  /** Leaves sealed. */
  sealedSize: number
  /** Events committed after the notary's checkpoint. */
  lagEvents: number
  /** How long the oldest of them has waited; 0 when none. */
  lagSeconds: number
  /** Age of the latest signed head; null when none was signed. */
  headAgeSeconds: number | null
  headSize: number | null
  /** Whether some process holds a live lease, and which. */
  leaseHeld: boolean
  owner: string | null
  refusals: number
  lastRefusal: string | null
  lastRefusalAt: string | null
}

const POSITION = /^(\d+)\/(\d+)$/

/**
 * One statement. The lag counts the PostgreSQL log after the checkpoint (the notary's own
 * `(xid8, position)` order); `startPosition` of another adapter reads as no lag here.
 */
export async function notaryFigures(db: Kysely<any>, name = 'main'): Promise<NotaryFigures> {
  const row = (await sql<{ tree_size: string | null; checkpoint: string | null; owner: string | null; live: boolean | null; refusals: string | null; last_refusal: string | null; last_refusal_at: Date | string | null; head_size: string | null; head_age: number | null }>`
    select n.tree_size::text, n.checkpoint, n.owner, n.lease_until > clock_timestamp() as live, n.refusals::text, n.last_refusal, n.last_refusal_at,
      h.tree_size::text as head_size, extract(epoch from clock_timestamp())::float8 - h.timestamp_ms / 1000.0 as head_age
    from (select 1) one
    left join audit_notary n on n.name = ${name}
    left join lateral (select tree_size, timestamp_ms from audit_tree_heads order by tree_size desc limit 1) h on true`.execute(db)).rows[0]!
  const m = POSITION.exec(row.checkpoint ?? '0/0')
  const [tx, pos] = m ? [m[1]!, m[2]!] : ['0', '0']
  const lag = (await sql<{ n: number; oldest: number | null }>`
    select count(*)::int as n, extract(epoch from clock_timestamp() - min(recorded_at))::float8 as oldest from es_events
    where (transaction_id, global_position) > (${tx}::xid8, ${pos}::bigint)`.execute(db)).rows[0]!
  return {
    sealedSize: Number(row.tree_size ?? 0),
    lagEvents: Number(lag.n),
    lagSeconds: Math.max(0, Number(lag.oldest ?? 0)),
    headAgeSeconds: row.head_age === null ? null : Math.max(0, Number(row.head_age)),
    headSize: row.head_size === null ? null : Number(row.head_size),
    leaseHeld: row.live === true,
    owner: row.owner,
    refusals: Number(row.refusals ?? 0),
    lastRefusal: row.last_refusal,
    lastRefusalAt: row.last_refusal_at === null ? null : new Date(row.last_refusal_at).toISOString(),
  }
}

/** Who holds the lease now (a standby notary says so in its log line). */
export async function leaseHolder(db: Kysely<any>, name: string): Promise<{ owner: string | null; leaseUntil: string | null } | undefined> {
  const r = await sql<{ owner: string | null; lease_until: Date | string | null }>`select owner, lease_until from audit_notary where name = ${name}`.execute(db)
  const row = r.rows[0]
  return row ? { owner: row.owner, leaseUntil: row.lease_until === null ? null : new Date(row.lease_until).toISOString() } : undefined
}

/** Counts a refusal where every process sees it (`/metrics`, `/ready`, `audit-log check`). */
export async function recordRefusal(db: Kysely<any>, name: string, reason: string): Promise<void> {
  await sql`update audit_notary set refusals = refusals + 1, last_refusal = ${reason}, last_refusal_at = clock_timestamp() where name = ${name}`.execute(db)
}
