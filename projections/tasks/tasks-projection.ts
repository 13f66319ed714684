import { sql, type CompiledQuery, type Insertable, type Kysely, type Updateable } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { TaskEvents, type TaskAttachmentAdded } from '../../schemas/events/tasks.js'
import { addressRow } from '../shipments/shipments-projection.js'
import { TaskRouteMarkers } from '../../schemas/events/routes.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { defineProjection, type Projection, type ProjectionContext, type RecordedOf } from '../projection.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import type { TaskAttachmentItem, TasksTable } from './tables.js'
import { idOf } from '../../schemas/events/streams.js'
import { dropZeroCounts, insertCounted, moveCounts, shiftDaysOf } from './listings.js'

/** Change-notice topic: tasks by ulid (for whoever caches them later). */
export const TASKS = 'tasks'

const ulidOf = (e: RecordedEvent) => idOf.task(e.streamId)!

type Changes = Updateable<TasksTable>

/** What the projection reads of a task stream: the task's own events and the routes module's markers. */
const TaskStreamEvents = { ...TaskEvents, ...TaskRouteMarkers }
type TaskRecorded = RecordedOf<typeof TaskStreamEvents>

/**
 * What one event changes in its task's row (columns only; attachments are appended apart). Also
 * used by the task commands to answer with the row as it will be, without reading it back.
 */
export function changesOf(e: EventOf<typeof TaskStreamEvents>): Changes | null {
  switch (e.type) {
    case 'TaskStarted': { const d = e.data; return { status: 'started', started_at: d.started_at, updated_at: d.started_at } }
    case 'TaskArrived': { const d = e.data; return { status: 'arrived', arrived_at: d.arrived_at, updated_at: d.arrived_at } }
    case 'TaskCompleted': {
      const d = e.data
      // Notes given at completion replace the task's (the events keep both).
      return { status: 'complete', completed_at: d.completed_at, updated_at: d.completed_at, signed_by: d.signed_by, barcode: d.barcode, ...(d.notes !== null ? { notes: d.notes } : {}) }
    }
    case 'TaskFailed': {
      const d = e.data
      return { status: 'failed', failed_at: d.failed_at, updated_at: d.failed_at, failure_reason: d.reason, signed_by: d.signed_by, barcode: d.barcode, ...(d.notes !== null ? { notes: d.notes } : {}) }
    }
    case 'TaskCancelled': { const d = e.data; return { status: 'cancelled', cancelled_at: d.cancelled_at, updated_at: d.cancelled_at } }
    case 'TaskAttachmentAdded': return { updated_at: e.data.uploaded_at }
    default: return null
  }
}

export const attachmentOf = (d: TaskAttachmentAdded): TaskAttachmentItem => ({
  id: d.id, filename: d.filename, content_type: d.content_type, size: d.size, sha256: d.sha256, blob_key: d.blob_key,
  description: d.description, uploaded_by: d.uploaded_by, uploaded_at: d.uploaded_at,
})

/**
 * A batch folded per task: a task created in the batch is one insert with everything that happened
 * to it since; any other task is one update (its new attachments appended). A complete from
 * `pending` (three events) is one row write, not three.
 */
function fold(events: TaskRecorded[]) {
  const inserts = new Map<string, Insertable<TasksTable> & { attachmentItems: TaskAttachmentItem[] }>()
  const updates = new Map<string, { set: Changes; attachments: TaskAttachmentItem[] }>()
  const addresses: ReturnType<typeof addressRow>[] = []
  /** Task → the route its last marker in the batch puts it on (null: off any route). */
  const routed = new Map<string, number | null>()
  for (const e of events) {
    const ulid = ulidOf(e)
    if (e.type === 'TaskRouted' || e.type === 'TaskUnrouted') {
      routed.set(ulid, e.type === 'TaskRouted' ? e.data.route_id : null)
      const inserted = inserts.get(ulid)
      if (inserted) { inserted.stream_version = e.streamVersion; continue }
      const update = updates.get(ulid) ?? { set: {}, attachments: [] }
      update.set.stream_version = e.streamVersion
      updates.set(ulid, update)
      continue
    }
    if (e.type === 'TaskCreated') {
      const d = e.data
      if (d.address.created) addresses.push(addressRow(d.address, d.created_at))
      inserts.set(ulid, {
        ulid: d.ulid, organization_id: d.organization_id, type: d.type, status: 'pending',
        address: JSON.stringify(addressRow(d.address, d.created_at)),
        shipment_id: d.shipment_id, workflow_id: d.workflow_id, step_key: d.step_key, assignee_id: d.assignee_id,
        route_id: null, position: null, time_windows: JSON.stringify(d.time_windows), duration_minutes: d.duration_minutes,
        dependencies: JSON.stringify(d.dependencies), requirements: JSON.stringify(d.requirements),
        load_grams: d.load.grams, load_volume_cm3: d.load.volume_cm3, load_packages: d.load.packages,
        signed_by: null, barcode: null, failure_reason: null, notes: d.notes, external_reference: d.external_reference,
        attachments: '[]', started_at: null, arrived_at: null, completed_at: null, failed_at: null, cancelled_at: null,
        created_at: d.created_at, updated_at: d.created_at, stream_version: e.streamVersion, attachmentItems: [],
      })
      continue
    }
    const changes = changesOf(e)
    if (!changes) continue
    const item = e.type === 'TaskAttachmentAdded' ? attachmentOf(e.data) : null
    const inserted = inserts.get(ulid)
    if (inserted) {
      Object.assign(inserted, changes, { stream_version: e.streamVersion })
      if (item) inserted.attachmentItems.push(item)
      continue
    }
    const update = updates.get(ulid) ?? { set: {}, attachments: [] }
    Object.assign(update.set, changes, { stream_version: e.streamVersion })
    if (item) update.attachments.push(item)
    updates.set(ulid, update)
  }
  return { inserts, updates, addresses, routed }
}

function writes(db: Kysely<ReadModelDatabase>, events: TaskRecorded[], ctx: ProjectionContext): CompiledQuery[] {
  const { inserts, updates, addresses, routed } = fold(events)
  const queries: CompiledQuery[] = []
  if (addresses.length) queries.push(db.insertInto('addresses').values(addresses).onConflict((oc) => oc.column('id').doNothing()).compile())
  if (inserts.size) {
    const rows = [...inserts.values()].map(({ attachmentItems, ...row }) => ({ ...row, attachments: JSON.stringify(attachmentItems) }))
    const insert = db.insertInto('tasks').values(rows).onConflict((oc) => oc.column('ulid').doNothing())
      .returning(['organization_id', 'assignee_id', 'status', 'type', 'created_at'])
    // Counted from what the insert returns: a task already there is not counted twice.
    queries.push(insertCounted(ctx.schema, insert).compile(db))
    const shiftDays = rows.flatMap((r) => shiftDaysOf(JSON.parse(r.time_windows))
      .map((day) => ({ ulid: r.ulid, day, org_id: r.organization_id, created_at: r.created_at })))
    if (shiftDays.length) queries.push(db.insertInto('task_shift_days').values(shiftDays).onConflict((oc) => oc.columns(['ulid', 'day']).doNothing()).compile())
  }
  // The counts move from the status each row still has, so before the rows change.
  const moves = [...updates].flatMap(([ulid, { set }]) => (set.status === undefined ? [] : [{ ulid, status: String(set.status) }]))
  if (moves.length) queries.push(moveCounts(ctx.schema, moves).compile(db))
  for (const [ulid, { set, attachments }] of updates) {
    const appended = attachments.length ? { attachments: sql<string>`attachments || ${JSON.stringify(attachments)}::jsonb` } : {}
    queries.push(db.updateTable('tasks').set({ ...set, ...appended }).where('ulid', '=', ulid).compile())
  }
  if (moves.length) queries.push(dropZeroCounts(ctx.schema, moves.map((m) => m.ulid)).compile(db))
  // The route from the task's own markers; the position from the routes projection's membership
  // rows (whichever of the two projections runs first, the later one leaves it right).
  for (const [ulid, routeId] of routed) {
    queries.push(db.updateTable('tasks').set((eb) => ({
      route_id: routeId,
      position: eb.selectFrom('route_tasks').select('route_tasks.position').whereRef('route_tasks.task_ulid', '=', 'tasks.ulid'),
    })).where('ulid', '=', ulid).compile())
  }
  ctx.changed(TASKS, [...inserts.keys(), ...updates.keys()])
  return queries
}

/**
 * tasks, one row per task stream. An address the task created (a new one, or a copy of a saved
 * place) also becomes an `addresses` row, so a later shipment or task can reuse it by `id`, as a
 * shipment's can. Never throws: an update of an unknown row changes nothing. Offers `statements`,
 * so its rounds can go in one round trip with the other projections'.
 */
export const tasksProjection: Projection = defineProjection({
  name: 'tasks',
  events: TaskStreamEvents,
  async apply(db, events, ctx) {
    for (const q of writes(db, events, ctx)) await db.executeQuery(q)
  },
  async statements(db, events, ctx) {
    return writes(db, events, ctx)
  },
})
