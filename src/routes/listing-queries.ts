import { type Kysely, sql } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { RouteStatus } from '../../schemas/api/routes.js'
import type { DayCount, ListingKey, ListingSeek } from '../http/listing-seek.js'
import { countedDay, keyAt, seekConditions, type ListingColumns } from '../http/listing-sql.js'

/**
 * The routes listing, newest shift first (shift_date desc, id desc), flat at a million (issue 32,
 * docs/decisions.md): a page reads one index range of the organization (all, by status or by
 * driver) and stops after its rows; a route's day is its shift date.
 */

export interface RouteFilters { shift_date?: string | undefined; status?: RouteStatus | undefined; driver_id?: string | undefined }
/** Who looks: the organization, or a driver (its published-or-later routes only). */
export interface RouteViewer { organizationId: string; driverId: string | null }

type Db = Kysely<ReadModelDatabase>
const KEY: ListingColumns = { at: 'routes.shift_date', atKind: 'day', id: 'routes.id', idType: 'bigint', order: 'desc' }

/**
 * The listing's routes per shift date, newest first, exact under the filters, from the kept counts.
 * Undefined for a driver's own view (its published routes): counted through its index instead.
 */
export async function routeListingDays(db: Db, viewer: RouteViewer, f: RouteFilters): Promise<DayCount[] | undefined> {
  if (viewer.driverId !== null) return undefined
  let q = db.selectFrom('route_listing_counts').select([countedDay().as('day'), sql<string>`sum(n)`.as('n')])
    .where('org_id', '=', viewer.organizationId).where('driver_id', '=', f.driver_id ?? '')
  if (f.status) q = q.where('status', '=', f.status)
  if (f.shift_date) q = q.where('day', '=', f.shift_date)
  const rows = await q.groupBy('day').orderBy('day', 'desc').execute()
  return rows.map((r) => ({ day: r.day, n: Number(r.n) }))
}

/** The viewer's routes under the filters (no order, no seek). */
function routesListed(db: Db, viewer: RouteViewer, f: RouteFilters) {
  let q = db.selectFrom('routes').where('routes.organization_id', '=', viewer.organizationId)
  if (viewer.driverId !== null) q = q.where('routes.driver_id', '=', viewer.driverId).where('routes.published_at', 'is not', null)
  if (f.shift_date) q = q.where('routes.shift_date', '=', f.shift_date)
  if (f.status) q = q.where('routes.status', '=', f.status)
  if (f.driver_id) q = q.where('routes.driver_id', '=', f.driver_id)
  return q
}

/** The ids and keys of a page, `limit` rows from the seek, newest shift first. */
export function routePageQuery(db: Db, viewer: RouteViewer, f: RouteFilters, seek: ListingSeek, limit: number) {
  let q = routesListed(db, viewer, f)
  for (const c of seekConditions(KEY, seek)) q = q.where(c)
  return q.select(['routes.id', keyAt(KEY).as('at')]).orderBy('routes.shift_date', 'desc').orderBy('routes.id', 'desc').offset(seek.skip).limit(limit)
}

/** A page's rows: their ids in order and each one's key (the last one's makes the next cursor). */
export async function routePage(db: Db, viewer: RouteViewer, f: RouteFilters, seek: ListingSeek, limit: number): Promise<{ id: number; key: ListingKey }[]> {
  const rows = await routePageQuery(db, viewer, f, seek, limit).execute()
  return rows.map((r) => ({ id: Number(r.id), key: { at: r.at, id: Number(r.id) } }))
}

/** A driver's `meta.total`: its published routes counted through its index (bounded by its own routes). */
export async function driverRoutesTotal(db: Db, viewer: RouteViewer, f: RouteFilters): Promise<number> {
  const row = await routesListed(db, viewer, f).select(sql<string>`count(*)`.as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}
