import { sql, type CompiledQuery, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { RouteEvents } from '../../schemas/events/routes.js'
import { TaskEvents } from '../../schemas/events/tasks.js'
import { pick } from '../../schemas/events/event-map.js'
import type { VehicleCapacity } from '../../schemas/events/vehicles.js'
import { addressRow } from '../shipments/shipments-projection.js'
import { defineProjection, type Projection, type ProjectionContext, type RecordedOf } from '../projection.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import type { RouteTasksTable } from './tables.js'
import { idOf } from '../../schemas/events/streams.js'
import { addCounts, dropZeroCounts } from '../listing-counts.js'

/** Change-notice topic: routes by id (the live progress feed and any cache of route objects). */
export const ROUTES = 'routes'

type Status = RouteTasksTable['status']
/** A task's steps, which move its membership row's status. */
const TaskSteps = pick(TaskEvents, 'TaskStarted', 'TaskArrived', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
const STATUS_OF: Record<keyof typeof TaskSteps, Status> = {
  TaskStarted: 'started', TaskArrived: 'arrived', TaskCompleted: 'complete', TaskFailed: 'failed', TaskCancelled: 'cancelled',
}
const RoutesEvents = { ...RouteEvents, ...TaskSteps }
type Recorded = RecordedOf<typeof RoutesEvents>
const isStep = (e: Recorded): e is RecordedOf<typeof TaskSteps> => Object.hasOwn(TaskSteps, e.type)

const routeIdOf = (e: RecordedEvent) => idOf.route(e.streamId)!
const capacityColumns = (c: VehicleCapacity) => ({ capacity_grams: c.grams, capacity_volume_cm3: c.volume_cm3, capacity_packages: c.packages })
const timeOf = (d: Record<string, unknown>): string =>
  String(d['created_at'] ?? d['updated_at'] ?? d['added_at'] ?? d['removed_at'] ?? d['reordered_at'] ?? d['published_at'] ?? d['started_at']
    ?? d['finished_at'] ?? d['blocked_at'] ?? d['unblocked_at'])

type Query = { compile(): CompiledQuery; execute(): Promise<unknown> }

/**
 * The writes of one batch, in event order: a route's row, its membership rows (positions kept
 * contiguous from 1), the statuses of its tasks (from the task events, starting from the status
 * each had when added), and `tasks.position` of every task whose position moved. Plain statements
 * with no read in between, so they can go in one round trip with the other projections'.
 */
async function writes(db: Kysely<ReadModelDatabase>, events: Recorded[], ctx: ProjectionContext): Promise<Query[]> {
  const q: Query[] = []
  const changed = new Set<number>()
  /** Routes whose row the batch writes (their listing counts are recounted). */
  const routeIds = new Set<number>()
  /** Route → the lowest position whose task moved (tasks.position is brought in line from there). */
  const moved = new Map<number, number>()
  const removed = new Set<string>()
  const statuses = new Map<string, Status>()
  const touch = (id: number, from: number) => moved.set(id, Math.min(moved.get(id) ?? from, from))
  /** Tasks whose step named its route: no look-up of where they are. */
  const placed = new Set<string>()
  for (const e of events) {
    if (isStep(e)) {
      const status = STATUS_OF[e.type]
      // A step names the route its task was on (older steps do not): on none, there is no row to change.
      const on = e.data.route_id
      if (on === null) continue
      const ulid = idOf.task(e.streamId)!
      statuses.set(ulid, status)
      if (on !== undefined) { placed.add(ulid); changed.add(on) }
      continue
    }
    if (idOf.route(e.streamId) === null) continue
    const id = routeIdOf(e)
    routeIds.add(id)
    const at = timeOf(e.data)
    const row = { updated_at: at, stream_version: e.streamVersion }
    changed.add(id)
    switch (e.type) {
      case 'RouteCreated': {
        const d = e.data
        q.push(db.insertInto('routes').values({
          id: d.route_id, organization_id: d.organization_id, name: d.name, shift_date: d.shift_date, status: 'draft', status_before_block: null,
          driver_id: d.driver_id, vehicle_id: d.vehicle_id, ...capacityColumns(d.capacity),
          start_address: JSON.stringify(d.start_address ? addressRow(d.start_address, d.created_at) : null),
          end_address: JSON.stringify(d.end_address ? addressRow(d.end_address, d.created_at) : null),
          blocked_reason: null, task_count: 0, published_at: null, started_at: null, finished_at: null,
          created_at: d.created_at, updated_at: d.created_at, stream_version: e.streamVersion,
        }).onConflict((oc) => oc.column('id').doNothing()))
        break
      }
      case 'RouteUpdated': {
        const d = e.data
        q.push(db.updateTable('routes').set({
          ...row,
          ...(d.name !== undefined ? { name: d.name } : {}),
          ...(d.driver_id !== undefined ? { driver_id: d.driver_id } : {}),
          ...(d.vehicle_id !== undefined ? { vehicle_id: d.vehicle_id } : {}),
          ...(d.capacity ? capacityColumns(d.capacity) : {}),
        }).where('id', '=', id))
        break
      }
      case 'RouteTasksAdded': {
        const d = e.data
        const k = d.tasks.length
        if (!k) break
        q.push(db.updateTable('route_tasks').set((eb) => ({ position: eb('position', '+', k) })).where('route_id', '=', id).where('position', '>', d.index))
        q.push(db.insertInto('route_tasks').values(d.tasks.map((t, j) => ({
          task_ulid: t.ulid, route_id: id, position: d.index + 1 + j, type: t.type, status: t.status ?? 'pending', shipment_id: t.shipment_id,
          load_grams: t.load.grams, load_volume_cm3: t.load.volume_cm3, load_packages: t.load.packages,
        }))).onConflict((oc) => oc.column('task_ulid').doUpdateSet((eb) => ({
          route_id: eb.ref('excluded.route_id'), position: eb.ref('excluded.position'), status: eb.ref('excluded.status'),
        }))))
        q.push(db.updateTable('routes').set((eb) => ({ ...row, task_count: eb('task_count', '+', k) })).where('id', '=', id))
        for (const t of d.tasks) removed.delete(t.ulid)
        touch(id, d.index + 1)
        break
      }
      case 'RouteTaskRemoved': {
        const d = e.data
        q.push(db.updateTable('route_tasks').set((eb) => ({ position: eb('position', '-', 1) })).where('route_id', '=', id)
          .where('position', '>', (eb) => eb.selectFrom('route_tasks as r').select('r.position').where('r.task_ulid', '=', d.task_ulid).where('r.route_id', '=', id)))
        q.push(db.deleteFrom('route_tasks').where('task_ulid', '=', d.task_ulid).where('route_id', '=', id))
        q.push(db.updateTable('routes').set((eb) => ({ ...row, task_count: eb('task_count', '-', 1) })).where('id', '=', id))
        removed.add(d.task_ulid)
        touch(id, 1)
        break
      }
      case 'RouteTasksReordered': {
        const d = e.data
        // Ulids hold no comma: the order goes as one text parameter.
        q.push(db.updateTable('route_tasks').set({ position: sql<number>`array_position(string_to_array(${d.task_ulids.join(',')}, ','), task_ulid)` })
          .where('route_id', '=', id).where('task_ulid', 'in', d.task_ulids.length ? d.task_ulids : ['']))
        q.push(db.updateTable('routes').set(row).where('id', '=', id))
        touch(id, 1)
        break
      }
      case 'RoutePublished': {
        const d = e.data
        q.push(db.updateTable('routes').set({ ...row, status: 'published', driver_id: d.driver_id, published_at: d.published_at }).where('id', '=', id))
        break
      }
      case 'RouteStarted': {
        const d = e.data
        // Started while blocked: it stays blocked, and an unblock returns it to started.
        q.push(db.updateTable('routes').set({
          ...row, started_at: d.started_at,
          status: sql`case when status = 'blocked' then status else 'started' end`,
          status_before_block: sql`case when status = 'blocked' then 'started' else status_before_block end`,
        }).where('id', '=', id))
        break
      }
      case 'RouteFinished': {
        const d = e.data
        q.push(db.updateTable('routes').set({ ...row, status: 'finished', status_before_block: null, blocked_reason: null, finished_at: d.finished_at }).where('id', '=', id))
        break
      }
      case 'RouteBlocked': {
        const d = e.data
        q.push(db.updateTable('routes').set({ ...row, status_before_block: sql`status`, status: 'blocked', blocked_reason: d.reason }).where('id', '=', id))
        break
      }
      case 'RouteUnblocked': {
        q.push(db.updateTable('routes').set({ ...row, status: sql`coalesce(status_before_block, 'draft')`, status_before_block: null, blocked_reason: null }).where('id', '=', id))
        break
      }
      default:
        break
    }
  }
  if (statuses.size) {
    // Which routes the other tasks are on, for the change notices (the last committed round; a task
    // added in this batch has its route noticed by the add itself).
    const unplaced = [...statuses.keys()].filter((u) => !placed.has(u))
    const on = unplaced.length ? await db.selectFrom('route_tasks').select('route_id').where('task_ulid', 'in', unplaced).execute() : []
    for (const r of on) changed.add(Number(r.route_id))
    const byStatus = new Map<Status, string[]>()
    for (const [u, s] of statuses) byStatus.set(s, [...(byStatus.get(s) ?? []), u])
    for (const [s, us] of byStatus) q.push(db.updateTable('route_tasks').set({ status: s }).where('task_ulid', 'in', us))
  }
  // tasks.position follows the membership (the tasks projection sets route_id from the task's own markers).
  const memberPosition = (eb: ExpressionBuilder<ReadModelDatabase, 'tasks'>) => eb.selectFrom('route_tasks').select('route_tasks.position').whereRef('route_tasks.task_ulid', '=', 'tasks.ulid')
  // Only rows whose position really moved are written (a removal does not know where it was).
  for (const [id, from] of moved) {
    q.push(db.updateTable('tasks').set((eb) => ({ position: memberPosition(eb) }))
      .where('ulid', 'in', (eb) => eb.selectFrom('route_tasks').select('task_ulid').where('route_id', '=', id).where('position', '>=', from))
      .where((eb) => eb('position', 'is distinct from', memberPosition(eb))))
  }
  if (removed.size) q.push(db.updateTable('tasks').set((eb) => ({ position: memberPosition(eb) })).where('ulid', 'in', [...removed]))
  if (routeIds.size) {
    // The counts of the routes this batch writes: their keys as found out, and as left in.
    const keys = routeCountKeys(ctx.schema, [...routeIds])
    const run = (raw: RawBuilder<unknown>): Query => ({ compile: () => raw.compile(db), execute: () => raw.execute(db) })
    q.unshift(run(addCounts(ctx.schema, 'route_listing_counts', ROUTE_COUNT_KEYS, keys, -1)))
    q.push(run(addCounts(ctx.schema, 'route_listing_counts', ROUTE_COUNT_KEYS, keys, 1)), run(dropZeroCounts(ctx.schema, 'route_listing_counts')))
  }
  ctx.changed(ROUTES, changed)
  return q
}

const ROUTE_COUNT_KEYS = ['org_id', 'driver_id', 'status', 'day'] as const

/** Each route's count keys: its organization's '' scope, and its driver's when it has one. */
const routeCountKeys = (schema: string, ids: number[]) =>
  sql`select r.organization_id as org_id, a.driver_id, r.status, r.shift_date::date as day
    from ${sql.id(schema, 'routes')} r
    cross join lateral (select '' as driver_id union all select r.driver_id where r.driver_id is not null) a
    where r.id = any(${ids}::bigint[])`

/**
 * routes and route_tasks (docs/read-models.md). Never throws on what it does not know: an update
 * of an unknown row changes nothing. Offers `statements`, so task rounds keep their one trip.
 */
export const routesProjection: Projection = defineProjection({
  name: 'routes',
  events: RoutesEvents,
  async apply(db, events, ctx) {
    for (const q of await writes(db, events, ctx)) await q.execute()
  },
  async statements(db, events, ctx) {
    return (await writes(db, events, ctx)).map((q) => q.compile())
  },
})
