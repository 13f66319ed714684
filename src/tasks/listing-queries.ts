import { type Kysely, sql } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { TaskStatus } from '../../schemas/api/tasks.js'
import type { TaskType } from '../../schemas/events/tasks.js'
import type { DayCount, ListingKey, ListingSeek } from '../http/listing-seek.js'
import { countedDay, keyAt, seekConditions, type ListingColumns } from '../http/listing-sql.js'
import type { TaskViewer } from './visibility.js'

/**
 * The tasks listing, oldest first (created_at, ulid), flat at a million (issue 32,
 * docs/decisions.md): every page reads one index range of the organization (by status, type or
 * assignee; a route's, a workflow's or a shipment's tasks; one shift day's) and stops after its rows.
 */

export interface TaskFilters {
  status?: TaskStatus | undefined; type?: TaskType | undefined; route_id?: number | undefined; assignee_id?: string | undefined
  workflow_id?: number | undefined; shipment_id?: number | undefined; shift_date?: string | undefined
}

type Db = Kysely<ReadModelDatabase>

/** Filters that name a few tasks (a route's, a workflow's, a shipment's, a day's shift): counted and skipped through their index. */
const narrow = (f: TaskFilters) => f.route_id !== undefined || f.workflow_id !== undefined || f.shipment_id !== undefined || f.shift_date !== undefined

/**
 * The listing's tasks per UTC day, oldest first, exact under the filters, from the kept counts.
 * Undefined for a narrow filter or a driver's own view: those count their (few) rows through the index.
 */
export async function taskListingDays(db: Db, viewer: TaskViewer, f: TaskFilters): Promise<DayCount[] | undefined> {
  if (viewer.driverId !== null || narrow(f)) return undefined
  let q = db.selectFrom('task_listing_counts')
    .select([countedDay().as('day'), sql<string>`sum(n)`.as('n')])
    .where('org_id', '=', viewer.organizationId).where('assignee_id', '=', f.assignee_id ?? '')
  if (f.status) q = q.where('status', '=', f.status)
  if (f.type) q = q.where('type', '=', f.type)
  const rows = await q.groupBy('day').orderBy('day').execute()
  return rows.map((r) => ({ day: r.day, n: Number(r.n) }))
}

/**
 * One branch of the listing: the organization's tasks under the filters, from the seek, in order.
 * `assignee` narrows to the tasks assigned to a driver; `onRoutesOf` to the tasks on a driver's
 * published routes not assigned to it (a driver's view is the two merged).
 */
function branch(db: Db, orgId: string, f: TaskFilters, seek: ListingSeek, limit: number, scope: { assignee?: string; onRoutesOf?: string }) {
  // A shift day's rows carry the task's key, so its own index gives the order.
  const key: ListingColumns = { at: f.shift_date ? 'sd.created_at' : 'tasks.created_at', atKind: 'instant', id: f.shift_date ? 'sd.ulid' : 'tasks.ulid', idType: 'text', order: 'asc' }
  let q = f.shift_date
    ? db.selectFrom('task_shift_days as sd').innerJoin('tasks', 'tasks.ulid', 'sd.ulid')
      .where('sd.org_id', '=', orgId).where('sd.day', '=', f.shift_date)
    : db.selectFrom('tasks')
  q = q.where('tasks.organization_id', '=', orgId)
  if (f.status) q = q.where('tasks.status', '=', f.status)
  if (f.type) q = q.where('tasks.type', '=', f.type)
  if (f.route_id !== undefined) q = q.where('tasks.route_id', '=', f.route_id)
  if (f.assignee_id) q = q.where('tasks.assignee_id', '=', f.assignee_id)
  if (f.workflow_id !== undefined) q = q.where('tasks.workflow_id', '=', f.workflow_id)
  if (f.shipment_id !== undefined) q = q.where('tasks.shipment_id', '=', f.shipment_id)
  if (scope.assignee) q = q.where('tasks.assignee_id', '=', scope.assignee)
  if (scope.onRoutesOf) {
    const driver = scope.onRoutesOf
    q = q.where('tasks.route_id', 'in', db.selectFrom('routes').select('routes.id')
      .where('routes.organization_id', '=', orgId).where('routes.driver_id', '=', driver).where('routes.published_at', 'is not', null))
      .where((eb) => eb.or([eb('tasks.assignee_id', 'is', null), eb('tasks.assignee_id', '<>', driver)]))
  }
  for (const c of seekConditions(key, seek)) q = q.where(c)
  return q.select([sql.ref<string>(key.id).as('ulid'), sql.ref<Date>(key.at).as('created_at')])
    .orderBy(sql.ref(key.at)).orderBy(sql.ref(key.id)).limit(limit)
}

/**
 * The ulids and keys of a page, `limit` rows from the seek, oldest first. A driver's view merges
 * its assigned tasks and the ones on its published routes (UNION ALL, each branch limited).
 */
export function taskPageQuery(db: Db, viewer: TaskViewer, f: TaskFilters, seek: ListingSeek, limit: number) {
  const org = viewer.organizationId
  const page = viewer.driverId === null
    ? branch(db, org, f, seek, seek.skip + limit, {}).offset(seek.skip).limit(limit)
    : (() => {
      const assigned = db.selectFrom(branch(db, org, f, seek, seek.skip + limit, { assignee: viewer.driverId }).as('a')).selectAll()
      const routed = db.selectFrom(branch(db, org, f, seek, seek.skip + limit, { onRoutesOf: viewer.driverId }).as('r')).selectAll()
      return db.selectFrom(assigned.unionAll(routed).as('u')).selectAll()
        .orderBy('u.created_at').orderBy('u.ulid').offset(seek.skip).limit(limit)
    })()
  // The key's text for the page's rows only, not for every row the offset skips.
  return db.selectFrom(page.as('p')).select(['p.ulid', 'p.created_at', keyAt(PAGE_KEY).as('at')])
    .orderBy('p.created_at').orderBy('p.ulid')
}

const PAGE_KEY: ListingColumns = { at: 'p.created_at', atKind: 'instant', id: 'p.ulid', idType: 'text', order: 'asc' }

/** A page's rows: their ulids in order and each one's key (the last one's makes the next cursor). */
export async function taskPage(db: Db, viewer: TaskViewer, f: TaskFilters, seek: ListingSeek, limit: number): Promise<{ ulid: string; key: ListingKey }[]> {
  const rows = await taskPageQuery(db, viewer, f, seek, limit).execute()
  return rows.map((r) => ({ ulid: r.ulid, key: { at: r.at, id: r.ulid } }))
}

/**
 * `meta.total` without day counts: a count over the narrow filter's index, or over the driver's own
 * tasks (its assigned ones and those on its published routes): bounded by those rows, not the organization's.
 */
export async function countedTotal(db: Db, viewer: TaskViewer, f: TaskFilters): Promise<number> {
  const all = { skip: 0 }
  const count = async (q: ReturnType<typeof branch>) =>
    Number((await db.selectFrom(q.clearOrderBy().clearLimit().as('c')).select(sql<string>`count(*)`.as('n')).executeTakeFirst())?.n ?? 0)
  if (viewer.driverId === null) return count(branch(db, viewer.organizationId, f, all, 1, {}))
  const [a, r] = await Promise.all([
    count(branch(db, viewer.organizationId, f, all, 1, { assignee: viewer.driverId })),
    count(branch(db, viewer.organizationId, f, all, 1, { onRoutesOf: viewer.driverId })),
  ])
  return a + r
}
