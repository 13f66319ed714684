import type { Selectable, Kysely } from 'kysely'
import type { Workflow, WorkflowStatus } from '../../schemas/api/workflows.js'
import type { WorkflowsTable } from '../../projections/workflows/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
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

export async function listWorkflows(
  db: Kysely<ReadModelDatabase>, orgId: string, f: { status?: WorkflowStatus | undefined; blueprint_key?: string | undefined; shipment_id?: number | undefined }, page: PageRequest,
) {
  let q = db.selectFrom('workflows').where('organization_id', '=', orgId)
  if (f.status) q = q.where('status', '=', f.status)
  if (f.blueprint_key) q = q.where('blueprint_key', '=', f.blueprint_key)
  if (f.shipment_id !== undefined) q = q.where('shipment_id', '=', f.shipment_id)
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('created_at').orderBy('id').limit(page.perPage).offset((page.page - 1) * page.perPage).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  const tasks = await tasksOf(db, rows.map((r) => Number(r.id)))
  return { rows: rows.map((r) => toWorkflow(r, tasks.get(Number(r.id)) ?? [])), total: Number(count.n) }
}

/** Open tasks of a workflow (what a cancel cancels), from the tasks read model. */
export const openTasksOf = async (db: Kysely<ReadModelDatabase>, workflowId: number): Promise<string[]> =>
  (await db.selectFrom('tasks').select('ulid').where('workflow_id', '=', workflowId).where('status', 'not in', ['complete', 'failed', 'cancelled']).execute())
    .map((r) => r.ulid)
