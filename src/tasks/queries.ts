import type { Selectable, Kysely } from 'kysely'
import type { Task, TaskStatus } from '../../schemas/api/tasks.js'
import { TaskEvents, type TaskType } from '../../schemas/events/tasks.js'
import { TaskRouteMarkers } from '../../schemas/events/routes.js'
import { eventNames, isEvent, isEventName, pick } from '../../schemas/events/event-map.js'
import type { EventStore } from '../infrastructure/event-store/event-store.js'
import type { TasksTable, TaskAttachmentItem } from '../../projections/tasks/tables.js'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { PageRequest } from '../http/pagination.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { countedTotal, taskListingDays, taskPage, type TaskFilters } from './listing-queries.js'
import { toAddress } from '../addresses/address-view.js'
import { visibleTo, type TaskViewer } from './visibility.js'
import { attachmentOf, changesOf } from '../../projections/tasks/tasks-projection.js'
import { taskStream, type TaskEvent, type TaskState } from './task.js'
import { ETA_COLUMNS, etaOf, type EtaColumns } from '../etas/eta-views.js'
import { iso, isoOrNull, json, numOrNull } from '../shared/rows.js'

export type TaskRow = Selectable<TasksTable> & { assignee_name: string | null } & EtaColumns

/** jsonb comes back parsed from `pg`; a string is parsed for safety. */

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

export type { TaskFilters }

/**
 * A page of the tasks listing, oldest first (issue 32): after the cursor's key, or for `page`
 * through the day counts (listing-seek.ts). `hasMore`: a row follows the page (one more is read).
 * `meta.total` is exact: the day counts summed, or a count bounded by a narrow filter's rows or
 * the driver's own tasks.
 */
export async function listTasks(db: Kysely<ReadModelDatabase>, viewer: TaskViewer, f: TaskFilters, page: PageRequest, after?: ListingKey) {
  const { total, shown, hasMore, last } = await readPage({
    days: await taskListingDays(db, viewer, f), countTotal: () => countedTotal(db, viewer, f), order: 'asc', page, after,
    read: (seek, limit) => taskPage(db, viewer, f, seek, limit),
  })
  const found = shown.length
    ? await tasksOf(db, viewer).selectAll('tasks').select('users.name as assignee_name').select(ETA_COLUMNS)
      .where('tasks.ulid', 'in', shown.map((r) => r.ulid)).execute()
    : []
  const byUlid = new Map(found.map((r) => [r.ulid, r]))
  const rows = shown.flatMap((r) => byUlid.get(r.ulid) ?? [])
  return { rows, total, hasMore, last }
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

/** What another module's decision knows of a task (a route adding it): from its row, or from its stream on a retry. */
export interface TaskFacts {
  ulid: string
  organizationId: string
  type: TaskType
  load: { grams: number; volume_cm3: number; packages: number }
  shipmentId: number | null
  status: TaskStatus
  /** The route it is on now, or null. */
  routeId: number | null
  /** The task stream's version these facts are from: a TaskRouted appends expecting it. */
  version: number
  /** Address and windows, when read from the row (the answer shows them). */
  details?: { address: unknown; time_windows: unknown }
}

/** The facts of the organization's tasks among `ulids`, from their rows (a ulid of no such task is left out). */
export async function taskFactsFromRows(db: Kysely<ReadModelDatabase>, orgId: string, ulids: readonly string[]): Promise<Map<string, TaskFacts>> {
  if (!ulids.length) return new Map()
  const rows = await db.selectFrom('tasks')
    .select(['ulid', 'organization_id', 'type', 'status', 'route_id', 'stream_version', 'shipment_id', 'load_grams', 'load_volume_cm3', 'load_packages', 'address', 'time_windows'])
    .where('organization_id', '=', orgId).where('ulid', 'in', [...ulids]).execute()
  return new Map(rows.map((r) => [r.ulid, {
    ulid: r.ulid, organizationId: r.organization_id, type: r.type, status: r.status, version: r.stream_version,
    routeId: r.route_id == null ? null : Number(r.route_id), shipmentId: r.shipment_id == null ? null : Number(r.shipment_id),
    load: { grams: Number(r.load_grams), volume_cm3: Number(r.load_volume_cm3), packages: Number(r.load_packages) },
    details: { address: r.address, time_windows: r.time_windows },
  }]))
}

/** The same facts from the tasks' streams (the authority): creation, last status, last route marker. */
export async function taskFactsFromStreams(store: Pick<EventStore, 'readStream'>, orgId: string, ulids: readonly string[]): Promise<Map<string, TaskFacts>> {
  const facts = new Map<string, TaskFacts>()
  await Promise.all(ulids.map(async (u) => {
    const f = await factsFromStream(store, orgId, u)
    if (f) facts.set(u, f)
  }))
  return facts
}

async function factsFromStream(store: Pick<EventStore, 'readStream'>, orgId: string, ulid: string): Promise<TaskFacts | undefined> {
  const history = await store.readStream(taskStream(ulid))
  const created = isEvent(TaskEvents, 'TaskCreated', history[0]) ? history[0].data : undefined
  if (!created || created.organization_id !== orgId) return undefined
  return {
    ulid, organizationId: orgId, type: created.type, load: created.load, shipmentId: created.shipment_id,
    status: statusOfTaskEvents(history) ?? 'pending', routeId: routeOfTaskEvents(history), version: history.length,
  }
}

/** The task events that set its status. */
const TaskStatusEvents = pick(TaskEvents, 'TaskCreated', 'TaskStarted', 'TaskArrived', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
const STATUS_OF_TASK_EVENT: Record<keyof typeof TaskStatusEvents, TaskStatus> = {
  TaskCreated: 'pending', TaskStarted: 'started', TaskArrived: 'arrived', TaskCompleted: 'complete', TaskFailed: 'failed', TaskCancelled: 'cancelled',
}
const TASK_STATUS_EVENTS = eventNames(TaskStatusEvents)

/** A task's status after these events of its stream (undefined when none changes it). */
function statusOfTaskEvents(events: readonly { type: string }[]): TaskStatus | undefined {
  let s: TaskStatus | undefined
  for (const e of events) if (isEventName(TaskStatusEvents, e.type)) s = STATUS_OF_TASK_EVENT[e.type]
  return s
}

/** The route a task is on after these events of its stream (its last routing marker), or null. */
function routeOfTaskEvents(events: readonly { type: string; data: unknown }[]): number | null {
  let routeId: number | null = null
  for (const e of events) {
    if (isEvent(TaskRouteMarkers, 'TaskRouted', e)) routeId = e.data.route_id
    else if (isEvent(TaskRouteMarkers, 'TaskUnrouted', e)) routeId = null
  }
  return routeId
}

/** A task's status as of `asOf`, from its stream (undefined when none of its events by then sets one). */
export async function taskStatusAsOf(store: Pick<EventStore, 'readStream'>, ulid: string, asOf: Date): Promise<TaskStatus | undefined> {
  const history = await store.readStream(taskStream(ulid), { until: new Date(asOf.getTime() + 1) })
  return statusOfTaskEvents(history.filter((e) => e.recordedAt.getTime() <= asOf.getTime()))
}

/** These tasks' statuses from their streams, in one read of their status events ('pending' for a task with none). */
export async function taskStatusesFromStreams(store: Pick<EventStore, 'readStreams'>, ulids: readonly string[]): Promise<Map<string, TaskStatus>> {
  const streams = await store.readStreams(ulids.map((u) => taskStream(u)), { types: TASK_STATUS_EVENTS })
  return new Map(ulids.map((u) => [u, statusOfTaskEvents(streams.get(taskStream(u)) ?? []) ?? 'pending']))
}

/** A task's status and the route it is on, from its stream (the authority). */
export async function taskRoutingFromStream(store: Pick<EventStore, 'readStream'>, ulid: string): Promise<{ status: TaskStatus | undefined; routeId: number | null }> {
  const history = await store.readStream(taskStream(ulid))
  return { status: statusOfTaskEvents(history), routeId: routeOfTaskEvents(history) }
}
