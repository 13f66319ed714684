import type { CompiledQuery, Kysely } from 'kysely'
import type { RecordedEvent } from '../../src/infrastructure/event-store/event-store.js'
import { RouteEvents, TaskRouteMarkers } from '../../schemas/events/routes.js'
import { TaskEvents } from '../../schemas/events/tasks.js'
import { pick } from '../../schemas/events/event-map.js'
import { progressOf } from '../routes/progress.js'
import { defineProjection, type Projection, type ProjectionContext, type RecordedOf } from '../projection.js'
import type { ReadModelDatabase } from '../read-model-database.js'
import type { FeedRouteStatus, FeedTaskStatus } from './tables.js'
import { idOf } from '../../schemas/events/streams.js'
import { json } from '../../src/shared/rows.js'

/** Change-notice topic: route ids whose feed grew (the live progress streams wake on it). */
export const ROUTE_FEED = 'route_feed'

const TaskSteps = pick(TaskEvents, 'TaskStarted', 'TaskArrived', 'TaskCompleted', 'TaskFailed', 'TaskCancelled')
const TASK_STATUS_EVENTS: Record<keyof typeof TaskSteps, { status: FeedTaskStatus; feed: string }> = {
  TaskStarted: { status: 'started', feed: 'task.started' },
  TaskArrived: { status: 'arrived', feed: 'task.arrived' },
  TaskCompleted: { status: 'complete', feed: 'task.completed' },
  TaskFailed: { status: 'failed', feed: 'task.failed' },
  TaskCancelled: { status: 'cancelled', feed: 'task.cancelled' },
}
const ROUTE_FEED_EVENTS: Record<string, string> = {
  RouteUpdated: 'route.updated', RoutePublished: 'route.published', RouteStarted: 'route.started',
  RouteFinished: 'route.finished', RouteBlocked: 'route.blocked', RouteUnblocked: 'route.unblocked',
}

interface RouteState {
  route_id: number
  organization_id: string
  driver_id: string | null
  status: FeedRouteStatus
  blocked_reason: string | null
  tasks: { ulid: string; status: FeedTaskStatus }[]
  last_seq: number
}
interface TaskState { ulid: string; route_id: number | null; status: FeedTaskStatus }
interface FeedRow { route_id: number; event: string; data: Record<string, unknown>; position: string }

const routeIdOf = (e: RecordedEvent): number => idOf.route(e.streamId)!
const taskUlidOf = (e: RecordedEvent): string => idOf.task(e.streamId)!
/** The events the feed reads: a route's, and of a task its creation, its routing markers and its steps. */
const RouteFeedEvents = { ...RouteEvents, ...TaskRouteMarkers, ...pick(TaskEvents, 'TaskCreated'), ...TaskSteps }
type Recorded = RecordedOf<typeof RouteFeedEvents>
const isRouteEvent = (e: Recorded): e is RecordedOf<typeof RouteEvents> => idOf.route(e.streamId) !== null

/** What the route's watchers see as its status: `blocked` while blocked, else its life-cycle state. */
export const feedStatusOf = (r: { status: string; blocked_reason: string | null }): string => (r.blocked_reason !== null ? 'blocked' : r.status)

/** The rows the batch needs: its tasks (and the routes they are on) and its routes. */
async function load(db: Kysely<ReadModelDatabase>, events: Recorded[]) {
  const created = new Set<string>()
  const ulids = new Set<string>()
  const routeIds = new Set<number>()
  for (const e of events) {
    if (isRouteEvent(e)) {
      routeIds.add(routeIdOf(e))
      if (e.type === 'RouteTasksAdded') for (const t of e.data.tasks) ulids.add(t.ulid)
    } else if (e.type === 'TaskCreated') created.add(taskUlidOf(e))
    // A step that names no route (null) is of a task on none: the event says all the feed needs.
    else if (e.data.route_id !== null) ulids.add(taskUlidOf(e))
  }
  for (const u of created) ulids.delete(u)
  const tasks = new Map<string, TaskState>()
  if (ulids.size) {
    const rows = await db.selectFrom('route_feed_tasks').selectAll().where('ulid', 'in', [...ulids]).execute()
    for (const r of rows) {
      const route_id = r.route_id === null ? null : Number(r.route_id)
      tasks.set(r.ulid, { ulid: r.ulid, route_id, status: r.status })
      if (route_id !== null) routeIds.add(route_id)
    }
  }
  const routes = new Map<number, RouteState>()
  if (routeIds.size) {
    const rows = await db.selectFrom('route_feed_routes').selectAll().where('route_id', 'in', [...routeIds]).execute()
    for (const r of rows) {
      routes.set(Number(r.route_id), {
        route_id: Number(r.route_id), organization_id: r.organization_id, driver_id: r.driver_id, status: r.status,
        blocked_reason: r.blocked_reason, tasks: json(r.tasks), last_seq: Number(r.last_seq),
      })
    }
  }
  return { tasks, routes }
}

/** The batch folded into the routes' and tasks' new state and the feed rows it adds, in log order. */
function fold(events: Recorded[], tasks: Map<string, TaskState>, routes: Map<number, RouteState>) {
  const changedRoutes = new Set<number>()
  const changedTasks = new Set<string>()
  const feed: FeedRow[] = []
  const taskOf = (ulid: string): TaskState => {
    let t = tasks.get(ulid)
    if (!t) tasks.set(ulid, (t = { ulid, route_id: null, status: 'pending' }))
    return t
  }
  const push = (r: RouteState, e: RecordedEvent, event: string, extra: Record<string, unknown> = {}, status?: string) => {
    feed.push({
      route_id: r.route_id, event, position: e.position,
      data: { route_id: r.route_id, ...extra, status: status ?? feedStatusOf(r), progress: progressOf(r.tasks.map((t) => t.status)) },
    })
  }
  const order = (r: RouteState) => ({ task_ulids: r.tasks.map((t) => t.ulid) })

  for (const e of events) {
    if (isRouteEvent(e)) {
      const id = routeIdOf(e)
      if (e.type === 'RouteCreated') {
        const d = e.data
        if (!routes.has(id)) routes.set(id, { route_id: id, organization_id: d.organization_id, driver_id: d.driver_id, status: 'draft', blocked_reason: null, tasks: [], last_seq: 0 })
        changedRoutes.add(id)
        continue
      }
      const r = routes.get(id)
      if (!r) continue
      changedRoutes.add(id)
      switch (e.type) {
        case 'RouteUpdated': { const d = e.data; if (d.driver_id !== undefined) r.driver_id = d.driver_id; break }
        case 'RoutePublished': { const d = e.data; r.driver_id = d.driver_id; r.status = 'published'; break }
        case 'RouteStarted': r.status = 'started'; break
        case 'RouteFinished': r.status = 'finished'; break
        case 'RouteBlocked': r.blocked_reason = e.data.reason ?? ''; break
        case 'RouteUnblocked': r.blocked_reason = null; break
        case 'RouteTasksAdded': {
          const d = e.data
          const added = d.tasks.filter((t) => !r.tasks.some((x) => x.ulid === t.ulid)).map((t) => {
            const task = taskOf(t.ulid)
            task.route_id = id
            changedTasks.add(t.ulid)
            return { ulid: t.ulid, status: task.status }
          })
          const at = Math.max(0, Math.min(d.index, r.tasks.length))
          r.tasks.splice(at, 0, ...added)
          for (const t of added) push(r, e, 'task.added', { task_ulid: t.ulid, position: r.tasks.findIndex((x) => x.ulid === t.ulid) + 1, ...order(r) }, t.status)
          continue
        }
        case 'RouteTaskRemoved': {
          const d = e.data
          const at = r.tasks.findIndex((t) => t.ulid === d.task_ulid)
          if (at < 0) continue
          const [removed] = r.tasks.splice(at, 1)
          const task = taskOf(d.task_ulid)
          if (task.route_id === id) task.route_id = null
          changedTasks.add(d.task_ulid)
          push(r, e, 'task.removed', { task_ulid: d.task_ulid, ...order(r) }, removed!.status)
          continue
        }
        case 'RouteTasksReordered': {
          const d = e.data
          const byUlid = new Map(r.tasks.map((t) => [t.ulid, t]))
          r.tasks = d.task_ulids.map((u) => byUlid.get(u) ?? { ulid: u, status: taskOf(u).status })
          push(r, e, 'tasks.reordered', order(r))
          continue
        }
        default: continue
      }
      const name = ROUTE_FEED_EVENTS[e.type]
      if (name) push(r, e, name, r.blocked_reason !== null && e.type === 'RouteBlocked' ? { blocked_reason: r.blocked_reason } : {})
      continue
    }
    const ulid = taskUlidOf(e)
    if (e.type === 'TaskCreated') {
      tasks.set(ulid, { ulid, route_id: null, status: 'pending' })
      changedTasks.add(ulid)
      continue
    }
    if (e.type === 'TaskRouted' || e.type === 'TaskUnrouted') {
      const d = e.data
      const task = taskOf(ulid)
      if (e.type === 'TaskRouted') task.route_id = d.route_id
      else if (task.route_id === d.route_id) task.route_id = null
      changedTasks.add(ulid)
      continue
    }
    const step = TASK_STATUS_EVENTS[e.type]
    if (!step) continue
    const task = taskOf(ulid)
    task.status = step.status
    changedTasks.add(ulid)
    const r = task.route_id === null ? undefined : routes.get(task.route_id)
    const at = r ? r.tasks.findIndex((t) => t.ulid === ulid) : -1
    if (!r || at < 0) continue
    r.tasks[at]!.status = step.status
    changedRoutes.add(r.route_id)
    // A step recorded only because a later one was taken directly (same instant) is no news of its own.
    if ('skipped' in e.data && e.data.skipped === true) continue
    push(r, e, step.feed, { task_ulid: ulid, position: at + 1 }, step.status)
  }
  return { changedRoutes, changedTasks, feed }
}

async function writes(db: Kysely<ReadModelDatabase>, events: Recorded[], ctx: ProjectionContext) {
  const { tasks, routes } = await load(db, events)
  const { changedRoutes, changedTasks, feed } = fold(events, tasks, routes)
  const queries: { compile(): CompiledQuery; execute(): Promise<unknown> }[] = []
  if (feed.length) {
    // The feed's own sequence, in log order: the runner applies events in commit order, which a
    // global position alone is not (a transaction that took its position first may commit last).
    const top = await db.selectFrom('route_feed').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst()
    let seq = Number(top?.seq ?? 0)
    const rows = feed.map((f) => {
      seq++
      routes.get(f.route_id)!.last_seq = seq
      return { seq, route_id: f.route_id, event: f.event, data: JSON.stringify(f.data), position: f.position }
    })
    queries.push(db.insertInto('route_feed').values(rows).onConflict((oc) => oc.column('seq').doNothing()))
  }
  if (changedTasks.size) {
    const rows = [...changedTasks].map((u) => tasks.get(u)!)
    queries.push(db.insertInto('route_feed_tasks').values(rows)
      .onConflict((oc) => oc.column('ulid').doUpdateSet((eb) => ({ route_id: eb.ref('excluded.route_id'), status: eb.ref('excluded.status') }))))
  }
  if (changedRoutes.size) {
    const rows = [...changedRoutes].map((id) => routes.get(id)!).map((r) => ({ ...r, tasks: JSON.stringify(r.tasks) }))
    queries.push(db.insertInto('route_feed_routes').values(rows).onConflict((oc) => oc.column('route_id').doUpdateSet((eb) => ({
      driver_id: eb.ref('excluded.driver_id'), status: eb.ref('excluded.status'), blocked_reason: eb.ref('excluded.blocked_reason'),
      tasks: eb.ref('excluded.tasks'), last_seq: eb.ref('excluded.last_seq'),
    }))))
  }
  if (feed.length) ctx.changed(ROUTE_FEED, new Set(feed.map((f) => f.route_id)))
  return queries
}

/**
 * route_feed_routes, route_feed_tasks and route_feed: the live progress of routes (DESIGN §3.9),
 * fed by the route stream and the task streams. Task events count only for a task on a route (the
 * route's tasks list says which). Never throws on an event it does not know or a row it lacks: an
 * event of an unknown route is skipped, an unknown task counts as pending.
 */
export const routeFeedProjection: Projection = defineProjection({
  name: 'route-feed',
  events: RouteFeedEvents,
  async apply(db, events, ctx) {
    for (const q of await writes(db, events, ctx)) await q.execute()
  },
  async statements(db, events, ctx) {
    return (await writes(db, events, ctx)).map((q) => q.compile())
  },
})
