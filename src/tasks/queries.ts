import type { Selectable, Kysely } from 'kysely'
import type { Task, TaskStatus } from '../../schemas/api/tasks.js'
import type { TaskType } from '../../schemas/events/tasks.js'
import type { TasksTable, TaskAttachmentItem } from '../../projections/tasks/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { toAddress } from '../addresses/address-view.js'
import { visibleTo, type TaskViewer } from './visibility.js'
import { attachmentOf, changesOf } from '../../projections/tasks/tasks-projection.js'
import type { TaskEvent, TaskState } from './task.js'
import { ETA_COLUMNS, etaOf, type EtaColumns } from '../etas/eta-views.js'
import { iso, isoOrNull, json, numOrNull } from '../shared/rows.js'

export type TaskRow = Selectable<TasksTable> & { assignee_name: string | null } & EtaColumns

/** jsonb comes back parsed from `pg` and PGlite alike; a string is parsed for safety. */

export const attachmentItem = (ulid: string, a: TaskAttachmentItem) => ({
  id: a.id, filename: a.filename, content_type: a.content_type, size: a.size, sha256: a.sha256, description: a.description,
  uploaded_by: a.uploaded_by, created_at: iso(a.uploaded_at), url: `/api/v1/tasks/${ulid}/attachments/${a.id}`,
})

export const toTask = (r: TaskRow): Task => ({
  ulid: r.ulid,
  type: r.type,
  status: r.status,
  address: toAddress(json(r.address)),
  shipment_id: numOrNull(r.shipment_id),
  workflow_id: numOrNull(r.workflow_id),
  step_key: r.step_key,
  assignee: r.assignee_id === null ? null : { id: r.assignee_id, name: r.assignee_name ?? '' },
  route_id: numOrNull(r.route_id),
  position: r.position,
  time_windows: json(r.time_windows),
  duration_minutes: r.duration_minutes,
  dependencies: json(r.dependencies),
  requirements: json(r.requirements),
  load: { grams: Number(r.load_grams), volume_cm3: Number(r.load_volume_cm3), packages: Number(r.load_packages) },
  signed_by: r.signed_by,
  failure_reason: r.failure_reason,
  notes: r.notes,
  attachments: json<TaskAttachmentItem[]>(r.attachments).map((a) => attachmentItem(r.ulid, a)),
  started_at: isoOrNull(r.started_at),
  arrived_at: isoOrNull(r.arrived_at),
  completed_at: isoOrNull(r.completed_at),
  failed_at: isoOrNull(r.failed_at),
  cancelled_at: isoOrNull(r.cancelled_at),
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  eta: etaOf(r.status, r),
})

const tasksOf = (db: Kysely<ReadModelDatabase>, viewer: TaskViewer) =>
  db.selectFrom('tasks')
    .leftJoin('users', 'users.id', 'tasks.assignee_id')
    .leftJoin('task_etas', 'task_etas.ulid', 'tasks.ulid')
    .where((eb) => visibleTo(eb, viewer))

/** A task the viewer may see, or undefined (another organization's, or not a driver's own: a 404). */
export const findTask = (db: Kysely<ReadModelDatabase>, viewer: TaskViewer, ulid: string): Promise<TaskRow | undefined> =>
  tasksOf(db, viewer).selectAll('tasks').select('users.name as assignee_name').select(ETA_COLUMNS).where('tasks.ulid', '=', ulid.toUpperCase()).executeTakeFirst()

export interface TaskFilters {
  status?: TaskStatus | undefined; type?: TaskType | undefined; route_id?: number | undefined; assignee_id?: string | undefined
  workflow_id?: number | undefined; shipment_id?: number | undefined; shift_date?: string | undefined
}

export async function listTasks(db: Kysely<ReadModelDatabase>, viewer: TaskViewer, f: TaskFilters, page: PageRequest) {
  let q = tasksOf(db, viewer)
  if (f.status) q = q.where('tasks.status', '=', f.status)
  if (f.type) q = q.where('tasks.type', '=', f.type)
  if (f.route_id !== undefined) q = q.where('tasks.route_id', '=', f.route_id)
  if (f.assignee_id) q = q.where('tasks.assignee_id', '=', f.assignee_id)
  if (f.workflow_id !== undefined) q = q.where('tasks.workflow_id', '=', f.workflow_id)
  if (f.shipment_id !== undefined) q = q.where('tasks.shipment_id', '=', f.shipment_id)
  if (f.shift_date) {
    // A window on that (UTC) day: it begins before the day ends and ends after the day begins.
    // Windows are stored as normalized ISO strings, so they compare as text.
    const dayStart = new Date(`${f.shift_date}T00:00:00.000Z`)
    const start = dayStart.toISOString()
    const end = new Date(dayStart.getTime() + 86_400_000).toISOString()
    q = q.where(({ exists, selectFrom }) => exists(
      selectFrom((eb) => eb.fn<{ value: { from: string; to: string } }>('jsonb_array_elements', ['tasks.time_windows']).as('w'))
        .select('w.value')
        .where((eb) => eb.and([eb(eb.ref('w.value', '->>').key('from'), '<', end), eb(eb.ref('w.value', '->>').key('to'), '>', start)])),
    ))
  }
  const [rows, count] = await Promise.all([
    q.selectAll('tasks').select('users.name as assignee_name').select(ETA_COLUMNS).orderBy('tasks.created_at').orderBy('tasks.ulid')
      .limit(page.perPage).offset((page.page - 1) * page.perPage).execute(),
    q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows, total: Number(count.n) }
}

/** Of these ulids, the ones that are tasks of the organization. */
export async function existingTasks(db: Kysely<ReadModelDatabase>, orgId: string, ulids: string[]): Promise<Set<string>> {
  if (!ulids.length) return new Set()
  const rows = await db.selectFrom('tasks').select('ulid').where('organization_id', '=', orgId).where('ulid', 'in', ulids).execute()
  return new Set(rows.map((r) => r.ulid))
}

/** Of a task's dependencies, the ones not complete yet (in the order the task lists them). */
export async function pendingDependencies(db: Kysely<ReadModelDatabase>, orgId: string, ulids: string[]): Promise<string[]> {
  if (!ulids.length) return []
  const rows = await db.selectFrom('tasks').select(['ulid', 'status']).where('organization_id', '=', orgId).where('ulid', 'in', ulids).execute()
  const done = new Set(rows.filter((r) => r.status === 'complete').map((r) => r.ulid))
  return ulids.filter((u) => !done.has(u))
}

/** A shipment of which the organization is the carrier, with its totals; undefined otherwise. */
export const carriedShipment = (db: Kysely<ReadModelDatabase>, orgId: string, shipmentId: number) =>
  db.selectFrom('shipments').select(['id', 'total_grams', 'total_cm3', 'total_packages'])
    .where('id', '=', shipmentId).where('carrier_id', '=', orgId).executeTakeFirst()

/** Package label codes of a shipment (what a barcode scan must match). */
export async function labelCodes(db: Kysely<ReadModelDatabase>, shipmentId: number | null): Promise<string[]> {
  if (shipmentId === null) return []
  const rows = await db.selectFrom('shipment_packages').select('label_code').where('shipment_id', '=', shipmentId).execute()
  return rows.map((r) => r.label_code)
}

/** An active user of the organization (a task's assignee). */
export const activeUser = (db: Kysely<ReadModelDatabase>, orgId: string, userId: string) =>
  db.selectFrom('users').select(['id', 'name']).where('id', '=', userId).where('organization_id', '=', orgId).where('status', '=', 'active').executeTakeFirst()

/** The ulids a task depends on. */
export const dependenciesOf = (r: TaskRow): string[] => json(r.dependencies)

/**
 * The decider's state from the task's row: everything a transition decides on is in it. A command
 * decided on it appends expecting the row's stream version, so a stale row only costs a retry.
 */
export function stateFromRow(r: TaskRow): TaskState {
  return {
    exists: true, ulid: r.ulid, organizationId: r.organization_id, status: r.status,
    requirements: json(r.requirements),
    attachments: new Map(json<TaskAttachmentItem[]>(r.attachments).map((a) => [a.id, a.content_type])),
    routeId: numOrNull(r.route_id),
    workflowId: numOrNull(r.workflow_id),
  }
}

/** The row as the projection will write it after these events (the same `changesOf`). */
export function rowAfter(r: TaskRow, events: TaskEvent[]): TaskRow {
  let row: TaskRow = { ...r, attachments: json<TaskAttachmentItem[]>(r.attachments) }
  for (const e of events) {
    const changes = changesOf(e)
    if (!changes) continue
    row = { ...row, ...changes, stream_version: row.stream_version + 1 } as TaskRow
    if (e.type === 'TaskAttachmentAdded') {
      row.attachments = [...json<TaskAttachmentItem[]>(row.attachments), attachmentOf(e.data)]
    }
  }
  return row
}
