import { type Kysely, sql } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { WorkflowStatus } from '../../schemas/api/workflows.js'
import type { DayCount, ListingKey, ListingSeek } from '../http/listing-seek.js'
import { countedDay, keyAt, seekConditions, type ListingColumns } from '../http/listing-sql.js'

/**
 * The workflows listing, oldest first (created_at, id), flat at a million (issue 32,
 * docs/decisions.md): a page reads one index range of the organization (all, by status, by
 * blueprint, or a shipment's few workflows) and stops after its rows.
 */

export interface WorkflowFilters { status?: WorkflowStatus | undefined; blueprint_key?: string | undefined; shipment_id?: number | undefined }

type Db = Kysely<ReadModelDatabase>
const KEY: ListingColumns = { at: 'workflows.created_at', atKind: 'instant', id: 'workflows.id', idType: 'bigint', order: 'asc' }

/**
 * The listing's workflows per UTC day, oldest first, exact under the filters, from the kept counts.
 * Undefined with `shipment_id`: a shipment has few workflows, counted through their index.
 */
export async function workflowListingDays(db: Db, orgId: string, f: WorkflowFilters): Promise<DayCount[] | undefined> {
  if (f.shipment_id !== undefined) return undefined
  let q = db.selectFrom('workflow_listing_counts').select([countedDay().as('day'), sql<string>`sum(n)`.as('n')])
    .where('org_id', '=', orgId).where('blueprint_key', '=', f.blueprint_key ?? '')
  if (f.status) q = q.where('status', '=', f.status)
  const rows = await q.groupBy('day').orderBy('day').execute()
  return rows.map((r) => ({ day: r.day, n: Number(r.n) }))
}

function workflowsListed(db: Db, orgId: string, f: WorkflowFilters) {
  let q = db.selectFrom('workflows').where('workflows.organization_id', '=', orgId)
  if (f.status) q = q.where('workflows.status', '=', f.status)
  if (f.blueprint_key) q = q.where('workflows.blueprint_key', '=', f.blueprint_key)
  if (f.shipment_id !== undefined) q = q.where('workflows.shipment_id', '=', f.shipment_id)
  return q
}

/** The ids and keys of a page, `limit` rows from the seek, oldest first. */
export function workflowPageQuery(db: Db, orgId: string, f: WorkflowFilters, seek: ListingSeek, limit: number) {
  let q = workflowsListed(db, orgId, f)
  for (const c of seekConditions(KEY, seek)) q = q.where(c)
  const page = q.select(['workflows.id', 'workflows.created_at']).orderBy('workflows.created_at').orderBy('workflows.id').offset(seek.skip).limit(limit)
  // The key's text for the page's rows only, not for every row the offset skips.
  return db.selectFrom(page.as('p')).select(['p.id', keyAt(PAGE_KEY).as('at')]).orderBy('p.created_at').orderBy('p.id')
}

const PAGE_KEY: ListingColumns = { ...KEY, at: 'p.created_at', id: 'p.id' }

/** A page's rows: their ids in order and each one's key. */
export async function workflowPage(db: Db, orgId: string, f: WorkflowFilters, seek: ListingSeek, limit: number): Promise<{ id: number; key: ListingKey }[]> {
  const rows = await workflowPageQuery(db, orgId, f, seek, limit).execute()
  return rows.map((r) => ({ id: Number(r.id), key: { at: r.at, id: Number(r.id) } }))
}

/** `meta.total` with `shipment_id`: a count over its index (a shipment has few workflows). */
export async function shipmentWorkflowsTotal(db: Db, orgId: string, f: WorkflowFilters): Promise<number> {
  const row = await workflowsListed(db, orgId, f).select(sql<string>`count(*)`.as('n')).executeTakeFirst()
  return Number(row?.n ?? 0)
}
