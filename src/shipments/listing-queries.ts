import { type Kysely, sql } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { DayCount, ListingKey, ListingSeek } from '../http/listing-seek.js'
import { countedDay, keyAt, seekConditions, type ListingColumns } from '../http/listing-sql.js'

/**
 * The organization's shipments listing over `shipment_listings` and `shipment_listing_counts`
 * (issue 32, docs/decisions.md): every statement reads one organization's index range and stops
 * early, or sums counts bounded by days × statuses, or counts at most a day's rows.
 */

export interface ListingFilters {
  status?: string[] | undefined
  externalReference?: string | undefined
  createdFrom?: string | undefined
  createdTo?: string | undefined
}

type Db = Kysely<ReadModelDatabase>
const KEY: ListingColumns = { at: 'l.created_at', atKind: 'instant', id: 'l.shipment_id', idType: 'bigint', order: 'desc' }
const PAGE_KEY: ListingColumns = { ...KEY, at: 'p.created_at', id: 'p.shipment_id' }

const statusesOf = (f: ListingFilters) => (f.status?.length ? [...new Set(f.status)] : undefined)
const dayOf = (at: Date) => at.toISOString().slice(0, 10)
const startOf = (day: string) => new Date(`${day}T00:00:00Z`)
const afterDay = (day: string) => new Date(startOf(day).getTime() + 86_400_000)

/** Counts listing rows through the index: for a near-unique reference, or a boundary day of a range. */
async function countRows(db: Db, orgId: string, f: ListingFilters, from?: Date, below?: Date): Promise<number> {
  const statuses = statusesOf(f)
  let q = db.selectFrom('shipment_listings as l').select(sql<string>`count(*)`.as('n')).where('l.org_id', '=', orgId)
  if (statuses) q = q.where('l.status', 'in', statuses)
  if (f.externalReference) q = q.where('l.external_reference', '=', f.externalReference)
  if (f.createdFrom) q = q.where('l.created_at', '>=', new Date(f.createdFrom))
  if (f.createdTo) q = q.where('l.created_at', '<=', new Date(f.createdTo))
  if (from) q = q.where('l.created_at', '>=', from)
  if (below) q = q.where('l.created_at', '<', below)
  return Number((await q.executeTakeFirst())?.n ?? 0)
}

/**
 * The listing's rows per UTC day, newest first, exact under the filters: whole days from the
 * counts, the days a `created_from`/`created_to` cuts through counted through the index.
 * Undefined with `external_reference`: the counts do not key it (its total is a plain count).
 */
export async function listingDays(db: Db, orgId: string, f: ListingFilters): Promise<DayCount[] | undefined> {
  if (f.externalReference) return undefined
  const statuses = statusesOf(f)
  const fromDay = f.createdFrom ? dayOf(new Date(f.createdFrom)) : undefined
  const toDay = f.createdTo ? dayOf(new Date(f.createdTo)) : undefined
  let q = db.selectFrom('shipment_listing_counts')
    .select([countedDay().as('day'), sql<string>`sum(n)`.as('n')])
    .where('org_id', '=', orgId)
  if (statuses) q = q.where('status', 'in', statuses)
  if (fromDay) q = q.where(sql<boolean>`day > ${fromDay}::date`)
  if (toDay) q = q.where(sql<boolean>`day < ${toDay}::date`)
  const rows = await q.groupBy('day').orderBy('day', 'desc').execute()
  const days = rows.map((r) => ({ day: r.day, n: Number(r.n) }))
  // The boundary days: the filter's own bounds cut them, the index counts them (a day's rows at most).
  for (const day of new Set([fromDay, toDay].filter((d): d is string => d !== undefined))) {
    const n = await countRows(db, orgId, f, startOf(day), afterDay(day))
    if (n > 0) days.push({ day, n })
  }
  return days.sort((a, b) => (a.day < b.day ? 1 : a.day > b.day ? -1 : 0))
}

/** `meta.total` of a listing with `external_reference`: a count over its index (a reference names few shipments). */
export const referenceTotal = (db: Db, orgId: string, f: ListingFilters) => countRows(db, orgId, f)

/**
 * The ids and keys of a page, `limit` rows from the seek, in the order (created_at desc,
 * shipment_id desc). Several statuses: one index range per status, each with the seek and the
 * limit, merged (UNION ALL) and limited: each reads at most `skip + limit` rows.
 */
export function listingPageQuery(db: Db, orgId: string, f: ListingFilters, seek: ListingSeek, limit: number) {
  const branch = (status: string | undefined) => {
    let q = db.selectFrom('shipment_listings as l')
      .select(['l.shipment_id', 'l.created_at'])
      .where('l.org_id', '=', orgId)
    if (status !== undefined) q = q.where('l.status', '=', status)
    if (f.externalReference) q = q.where('l.external_reference', '=', f.externalReference)
    if (f.createdFrom) q = q.where('l.created_at', '>=', new Date(f.createdFrom))
    if (f.createdTo) q = q.where('l.created_at', '<=', new Date(f.createdTo))
    for (const c of seekConditions(KEY, seek)) q = q.where(c)
    return q.orderBy('l.created_at', 'desc').orderBy('l.shipment_id', 'desc')
  }
  const statuses = statusesOf(f)
  const page = !statuses || statuses.length === 1
    ? branch(statuses?.[0]).offset(seek.skip).limit(limit)
    : (() => {
      const [first, ...rest] = statuses.map((s, i) => db.selectFrom(branch(s).limit(seek.skip + limit).as(`b${i}`)).selectAll())
      const merged = rest.reduce((u, b) => u.unionAll(b), first!)
      return db.selectFrom(merged.as('u')).selectAll()
        .orderBy('u.created_at', 'desc').orderBy('u.shipment_id', 'desc').offset(seek.skip).limit(limit)
    })()
  // The key's text is made for the page's rows only: in the same select it would be made for every
  // row the offset skips too (a deep page's day: 20k rows made it three times as slow).
  return db.selectFrom(page.as('p')).select(['p.shipment_id', 'p.created_at', keyAt(PAGE_KEY).as('at')])
    .orderBy('p.created_at', 'desc').orderBy('p.shipment_id', 'desc')
}

/** A page's rows: their ids in order and each one's key (the last one's makes the next cursor). */
export async function listingPage(db: Db, orgId: string, f: ListingFilters, seek: ListingSeek, limit: number): Promise<{ id: number; key: ListingKey }[]> {
  const rows = await listingPageQuery(db, orgId, f, seek, limit).execute()
  return rows.map((r) => ({ id: Number(r.shipment_id), key: { at: r.at, id: Number(r.shipment_id) } }))
}
