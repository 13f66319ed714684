import type { Selectable, Kysely } from 'kysely'
import type { Workflow } from '../../schemas/api/workflows.js'
import type { WorkflowsTable } from '../../projections/workflows/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { shipmentWorkflowsTotal, workflowListingDays, workflowPage, type WorkflowFilters } from './listing-queries.js'
import { iso, isoOrNull } from '../shared/rows.js'

type WorkflowRow = Selectable<WorkflowsTable>
type TaskItem = Workflow['tasks'][number]


export const toWorkflow = (r: WorkflowRow, tasks: TaskItem[]): Workflow => ({
  id: Number(r.id), status: r.status,
  blueprint: { id: Number(r.blueprint_id), key: r.blueprint_key, version: r.blueprint_version },
  data: r.data, shipment_id: r.shipment_id === null ? null : Number(r.shipment_id), tasks, errors: r.errors,
  created_at: iso(r.created_at), updated_at: iso(r.updated_at),
  completed_at: isoOrNull(r.completed_at), failed_at: isoOrNull(r.failed_at), cancelled_at: isoOrNull(r.cancelled_at),
})

/** The tasks of these workflows, oldest first, by workflow id (one query for a whole page). */
async function tasksOf(db: Kysely<ReadModelDatabase>, workflowIds: number[]): Promise<Map<number, TaskItem[]>> {
  const out = new Map<number, TaskItem[]>(workflowIds.map((id) => [id, []]))
  if (!workflowIds.length) return out
  const rows = await db.selectFrom('tasks').select(['ulid', 'workflow_id', 'step_key', 'type', 'status'])
    .where('workflow_id', 'in', workflowIds).orderBy('created_at').orderBy('ulid').execute()
  for (const r of rows) out.get(Number(r.workflow_id))?.push({ ulid: r.ulid, step_key: r.step_key ?? '', type: r.type, status: r.status })
  return out
}

/** A workflow of the organization as the API shows it, or undefined (another tenant's is unknown). */
export async function readWorkflow(db: Kysely<ReadModelDatabase>, orgId: string, id: number): Promise<Workflow | undefined> {
  const row = await db.selectFrom('workflows').selectAll().where('id', '=', id).where('organization_id', '=', orgId).executeTakeFirst()
  if (!row) return undefined
  return toWorkflow(row, (await tasksOf(db, [id])).get(id) ?? [])
}

/**
 * A page of the workflows listing, oldest first (issue 32): after the cursor's key, or for `page`
 * through the day counts (listing-seek.ts); `hasMore`: a row follows the page.
 */
export async function listWorkflows(db: Kysely<ReadModelDatabase>, orgId: string, f: WorkflowFilters, page: PageRequest, after?: ListingKey) {
  const { total, shown, hasMore, last } = await readPage({
    days: await workflowListingDays(db, orgId, f), countTotal: () => shipmentWorkflowsTotal(db, orgId, f), order: 'asc', page, after,
    read: (seek, limit) => workflowPage(db, orgId, f, seek, limit),
  })
  const ids = shown.map((r) => r.id)
  const found = ids.length ? await db.selectFrom('workflows').selectAll().where('id', 'in', ids).execute() : []
  const byId = new Map(found.map((r) => [Number(r.id), r]))
  const tasks = await tasksOf(db, ids)
  const rows = ids.flatMap((id) => { const r = byId.get(id); return r ? [toWorkflow(r, tasks.get(id) ?? [])] : [] })
  return { rows, total, hasMore, last }
}

/** Open tasks of a workflow (what a cancel cancels), from the tasks read model. */
export const openTasksOf = async (db: Kysely<ReadModelDatabase>, workflowId: number): Promise<string[]> =>
  (await db.selectFrom('tasks').select('ulid').where('workflow_id', '=', workflowId).where('status', 'not in', ['complete', 'failed', 'cancelled']).execute())
    .map((r) => r.ulid)
