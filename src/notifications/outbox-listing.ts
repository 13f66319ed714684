import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Database } from '../infrastructure/database/database.js'
import { readPage, type DayCount, type ListingKey, type ListingSeek } from '../http/listing-seek.js'
import { countedDay, keyAt, seekConditions, type ListingColumns } from '../http/listing-sql.js'

/**
 * The outbox's delivery logs, a carrier's notifications and a webhook's deliveries (issue 32,
 * docs/decisions.md), newest first (created_at desc, seq desc): each page one owner's index range
 * that stops early, the total and deep pages from `outbox_listing_counts` (outbox-counts.ts).
 */

export type OutboxOwner = { target: 'carrier'; carrierId: string } | { target: 'webhook'; webhookId: string }
export interface OutboxFilters { status?: string | undefined; shipmentId?: number | undefined }

const KEY: ListingColumns = { at: 'created_at', atKind: 'instant', id: 'seq', idType: 'bigint', order: 'desc' }

const ownerOf = (o: OutboxOwner) => (o.target === 'carrier' ? o.carrierId : o.webhookId)
// The owner's column, so the partial index of that owner serves the page.
const ownerIs = (o: OutboxOwner) => (o.target === 'carrier' ? sql`carrier_id = ${o.carrierId}` : sql`webhook_id = ${o.webhookId}`)

/** The owner's rows per UTC day newest first; undefined with a shipment (the counts do not key it). */
async function outboxDays(db: Kysely<Database>, o: OutboxOwner, f: OutboxFilters): Promise<DayCount[] | undefined> {
  if (f.shipmentId !== undefined) return undefined
  const r = await sql<{ day: string; n: string }>`
    select ${countedDay()} as day, sum(n) as n from outbox_listing_counts
    where target = ${o.target} and owner_id = ${ownerOf(o)} ${f.status ? sql`and status = ${f.status}` : sql``}
    group by day having sum(n) > 0 order by day desc`.execute(db)
  return r.rows.map((d) => ({ day: d.day, n: Number(d.n) }))
}

const where = (o: OutboxOwner, f: OutboxFilters) => sql`${ownerIs(o)}
  ${f.status ? sql`and status = ${f.status}` : sql``}
  ${f.shipmentId !== undefined ? sql`and shipment_id = ${f.shipmentId}` : sql``}`

/** The page's statement: `columns` of `limit` rows from the seek, with each row's key (`key_at`, `seq`). */
export const outboxPageQuery = <R>(o: OutboxOwner, f: OutboxFilters, seek: ListingSeek, limit: number, columns: RawBuilder<unknown>) => sql<R & { seq: string | number; key_at: string }>`
  select ${columns}, seq, ${keyAt(KEY)} as key_at
  from (
    -- The page's rows first, then their columns and keys: not made for every row the offset skips.
    select * from carrier_notifications
    where ${where(o, f)}
      ${sql.join(seekConditions(KEY, seek).map((c) => sql`and ${c}`), sql` `)}
    order by created_at desc, seq desc offset ${seek.skip} limit ${limit}) as carrier_notifications
  order by created_at desc, seq desc`

/** A page of an owner's delivery log: its rows (with `columns`), the exact total, and the next page's key. */
export async function listOutbox<R>(
  db: Kysely<Database>, o: OutboxOwner, f: OutboxFilters, columns: RawBuilder<unknown>, perPage: number, page: number, after?: ListingKey,
) {
  const { shown, ...listed } = await readPage({
    days: await outboxDays(db, o, f), order: KEY.order, page: { perPage, page }, after,
    countTotal: async () => Number((await sql<{ n: string }>`select count(*) as n from carrier_notifications where ${where(o, f)}`.execute(db)).rows[0]?.n ?? 0),
    read: async (seek, limit) => (await outboxPageQuery<R>(o, f, seek, limit, columns).execute(db)).rows
      .map((r) => ({ row: r, key: { at: r.key_at, id: Number(r.seq) } })),
  })
  return { rows: shown.map((r) => r.row), ...listed }
}
