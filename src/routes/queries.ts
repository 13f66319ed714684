import type { Kysely, Selectable } from 'kysely'
import type { ReadModelDatabase } from '../../projections/read-model-database.js'
import type { Route, RouteStatus } from '../../schemas/api/routes.js'
import { RouteEvents, type RouteTaskSnapshot } from '../../schemas/events/routes.js'
import type { TaskType } from '../../schemas/events/tasks.js'
import { isEvent } from '../../schemas/events/event-map.js'
import type { RoutesTable, RouteTasksTable } from '../../projections/routes/tables.js'
import { progressOf, type TaskStatusName } from '../../projections/routes/progress.js'
import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Platform } from '../platform.js'
import { NotFoundError } from '../shared/errors.js'
import type { PageRequest } from '../http/pagination.js'
import { readPage, type ListingKey } from '../http/listing-seek.js'
import { driverRoutesTotal, routeListingDays, routePage, type RouteFilters, type RouteViewer } from './listing-queries.js'
import { toAddress } from '../addresses/address-view.js'
import { loadProfile, type RouteState } from './route.js'
import { lateStops } from '../etas/late-stops.js'
import { driverPositionFor, driverPositionsOf, ETA_COLUMNS, etaOf, type DriverPositionView, type EtaColumns } from '../etas/eta-views.js'
import { taskStatusAsOf } from '../tasks/queries.js'
import { iso, isoOrNull, json, numOrNull } from '../shared/rows.js'

/** A route row with its driver's and vehicle's names joined in (undefined: not joined, look them up). */
export type RouteRow = Selectable<RoutesTable> & { driver_name?: string | null | undefined; vehicle_name?: string | null | undefined; vehicle_plate?: string | null | undefined }
type RouteTaskRow = Selectable<RouteTasksTable>

export type { RouteViewer }


export const capacityOfRow = (r: RouteRow) => ({ grams: numOrNull(r.capacity_grams), volume_cm3: numOrNull(r.capacity_volume_cm3), packages: numOrNull(r.capacity_packages) })

export const snapshotOfRow = (t: RouteTaskRow): RouteTaskSnapshot => ({
  ulid: t.task_ulid, type: t.type, shipment_id: numOrNull(t.shipment_id), status: t.status,
  load: { grams: Number(t.load_grams), volume_cm3: Number(t.load_volume_cm3), packages: Number(t.load_packages) },
})

/** A route of the viewer, or undefined (another organization's, or not a driver's published route: a 404). */
export function findRouteRow(db: Kysely<ReadModelDatabase>, viewer: RouteViewer, id: number): Promise<RouteRow | undefined> {
  return routesOf(db, viewer).selectAll('routes').select(PEOPLE_COLUMNS).where('routes.id', '=', id).executeTakeFirst()
}

/** The routes the viewer may see, with driver and vehicle joined (their names come in the same round trip). */
function routesOf(db: Kysely<ReadModelDatabase>, viewer: RouteViewer) {
  let q = db.selectFrom('routes')
    .leftJoin('users', 'users.id', 'routes.driver_id').leftJoin('vehicles', 'vehicles.id', 'routes.vehicle_id')
    .where('routes.organization_id', '=', viewer.organizationId)
  if (viewer.driverId !== null) q = q.where('routes.driver_id', '=', viewer.driverId).where('routes.published_at', 'is not', null)
  return q
}
const PEOPLE_COLUMNS = ['users.name as driver_name', 'vehicles.name as vehicle_name', 'vehicles.plate as vehicle_plate'] as const

/** The route's membership rows, in route order. */
export const routeTaskRows = (db: Kysely<ReadModelDatabase>, routeId: number) =>
  db.selectFrom('route_tasks').selectAll().where('route_id', '=', routeId).orderBy('position').execute()

/**
 * The decider's state from the read model (a route of 300 tasks is two indexed reads, not 600
 * events). A command decided on it appends expecting the row's stream version, so a stale row only
 * costs a retry on the stream.
 */
export function stateFromRows(r: RouteRow, tasks: RouteTaskRow[]): RouteState {
  return {
    exists: true, id: Number(r.id), organizationId: r.organization_id, status: r.status, statusBeforeBlock: r.status_before_block,
    name: r.name, shiftDate: r.shift_date, driverId: r.driver_id, vehicleId: r.vehicle_id, capacity: capacityOfRow(r),
    tasks: tasks.map(snapshotOfRow),
  }
}

/** What the route object shows of its tasks beyond the membership: address and time windows (from `tasks`). */
async function taskDetails(db: Kysely<ReadModelDatabase>, ulids: string[]) {
  if (!ulids.length) return new Map<string, { address: unknown; time_windows: unknown; status: string } & EtaColumns>()
  const rows = await db.selectFrom('tasks').leftJoin('task_etas', 'task_etas.ulid', 'tasks.ulid')
    .select(['tasks.ulid', 'tasks.address', 'tasks.time_windows', 'tasks.status']).select(ETA_COLUMNS).where('tasks.ulid', 'in', ulids).execute()
  return new Map(rows.map((r) => [r.ulid, r]))
}

async function peopleOf(db: Kysely<ReadModelDatabase>, rows: RouteRow[]) {
  // Rows read with the join carry the names already; only the others (as_of) are looked up.
  const joined = rows.filter((r) => r.driver_name !== undefined)
  const drivers = [...new Set(rows.filter((r) => r.driver_name === undefined).map((r) => r.driver_id).filter((x): x is string => x !== null))]
  const vehicles = [...new Set(rows.filter((r) => r.vehicle_name === undefined).map((r) => r.vehicle_id).filter((x): x is string => x !== null))]
  const d0 = joined.filter((r) => r.driver_id !== null).map((r) => ({ id: r.driver_id!, name: r.driver_name ?? '' }))
  const v0 = joined.filter((r) => r.vehicle_id !== null).map((r) => ({ id: r.vehicle_id!, name: r.vehicle_name ?? '', plate: r.vehicle_plate ?? '' }))
  if (!drivers.length && !vehicles.length) return { drivers: new Map(d0.map((x) => [x.id, x])), vehicles: new Map(v0.map((x) => [x.id, x])) }
  const [d1, v1] = await Promise.all([
    drivers.length ? db.selectFrom('users').select(['id', 'name']).where('id', 'in', drivers).execute() : [],
    vehicles.length ? db.selectFrom('vehicles').select(['id', 'name', 'plate']).where('id', 'in', vehicles).execute() : [],
  ])
  const d = [...d0, ...d1]
  const v = [...v0, ...v1]
  return { drivers: new Map(d.map((x) => [x.id, x])), vehicles: new Map(v.map((x) => [x.id, x])) }
}

interface RouteTaskView { ulid: string; type: TaskType; status: TaskStatusName; shipment_id: number | null; load: RouteTaskSnapshot['load'] }

/** Live figures of a route object (DESIGN §3.10); absent for a past state (`as_of`): no ETA, no position. */
interface LiveFigures { positions: Map<string, DriverPositionView> }

function routeObject(
  r: RouteRow, tasks: RouteTaskView[], details: Map<string, { address: unknown; time_windows: unknown } & EtaColumns>, people: Awaited<ReturnType<typeof peopleOf>>,
  live?: LiveFigures,
): Route {
  const capacity = capacityOfRow(r)
  const driver = r.driver_id === null ? null : people.drivers.get(r.driver_id)
  const vehicle = r.vehicle_id === null ? null : people.vehicles.get(r.vehicle_id)
  const routeTasks = tasks.map((t, i) => {
    const d = details.get(t.ulid)
    return {
      ulid: t.ulid, position: i + 1, type: t.type, status: t.status,
      address: d ? toAddress(json(d.address)) : null, time_windows: d ? json<{ from: string; to: string }[]>(d.time_windows) : [],
      eta: live && d ? etaOf(t.status, d) : null,
    }
  })
  return {
    id: Number(r.id), name: r.name, shift_date: r.shift_date, status: r.status,
    driver: r.driver_id === null ? null : { id: r.driver_id, name: driver?.name ?? '' },
    vehicle: r.vehicle_id === null ? null : { id: r.vehicle_id, name: vehicle?.name ?? '', plate: vehicle?.plate ?? '' },
    tasks: routeTasks,
    late_stops: lateStops(routeTasks),
    load: loadProfile(tasks, capacity).peak,
    capacity,
    progress: progressOf(tasks.map((t) => t.status)),
    blocked_reason: r.blocked_reason,
    published_at: isoOrNull(r.published_at), started_at: isoOrNull(r.started_at), finished_at: isoOrNull(r.finished_at),
    created_at: iso(r.created_at), updated_at: iso(r.updated_at),
    driver_position: live ? driverPositionFor(live.positions, r) : null,
  }
}

/** Needs the Platform: driver positions live in the platform tables (`platform.db`) and age by its clock. */
const liveFigures = async (platform: Pick<Platform, 'db' | 'clock'>, rows: readonly RouteRow[]): Promise<LiveFigures> =>
  ({ positions: await driverPositionsOf(platform.db, rows, platform.clock()) })

const viewOfRow = (t: RouteTaskRow): RouteTaskView => ({ ...snapshotOfRow(t), status: t.status })

/** The route object of §3.9 from the read model. */
export async function readRoute(platform: Platform, viewer: RouteViewer, id: number): Promise<Route | undefined> {
  // The row and the members in parallel (a route of 300 tasks answers in two round trips, not four).
  const [row, members] = await Promise.all([findRouteRow(platform.rm, viewer, id), membersWithDetails(platform.rm, id)])
  if (!row) return undefined
  const [people, live] = await Promise.all([peopleOf(platform.rm, [row]), liveFigures(platform, [row])])
  return routeObject(row, members.map(viewOfRow), new Map(members.map((m) => [m.task_ulid, m])), people, live)
}

/** Membership rows in route order, with each task's address and windows (one join). */
export const membersWithDetails = (db: Kysely<ReadModelDatabase>, routeId: number) =>
  db.selectFrom('route_tasks').innerJoin('tasks', 'tasks.ulid', 'route_tasks.task_ulid')
    .leftJoin('task_etas', 'task_etas.ulid', 'route_tasks.task_ulid')
    .selectAll('route_tasks').select(['tasks.address', 'tasks.time_windows']).select(ETA_COLUMNS)
    .where('route_tasks.route_id', '=', routeId).orderBy('route_tasks.position').execute()

export async function routeFromRow(platform: Platform, row: RouteRow): Promise<Route> {
  const [members, people, live] = await Promise.all([membersWithDetails(platform.rm, Number(row.id)), peopleOf(platform.rm, [row]), liveFigures(platform, [row])])
  return routeObject(row, members.map(viewOfRow), new Map(members.map((m) => [m.task_ulid, m])), people, live)
}

export type { RouteFilters }

/**
 * A page of the routes listing, newest shift first (issue 32): after the cursor's key, or for
 * `page` through the counts per shift date (listing-seek.ts); `hasMore`: a row follows the page.
 */
export async function listRoutes(platform: Pick<Platform, 'rm' | 'db' | 'clock'>, viewer: RouteViewer, f: RouteFilters, page: PageRequest, after?: ListingKey) {
  const db = platform.rm
  const { total, shown, hasMore, last } = await readPage({
    days: await routeListingDays(db, viewer, f), countTotal: () => driverRoutesTotal(db, viewer, f), order: 'desc', page, after,
    read: (seek, limit) => routePage(db, viewer, f, seek, limit),
  })
  const found = shown.length ? await routesOf(db, viewer).selectAll('routes').select(PEOPLE_COLUMNS).where('routes.id', 'in', shown.map((r) => r.id)).execute() : []
  const byId = new Map(found.map((r) => [Number(r.id), r]))
  const rows = shown.flatMap((r) => byId.get(r.id) ?? [])
  const ids = rows.map((r) => Number(r.id))
  const members = ids.length ? await platform.rm.selectFrom('route_tasks').selectAll().where('route_id', 'in', ids).orderBy('route_id').orderBy('position').execute() : []
  const [details, people, live] = await Promise.all([taskDetails(platform.rm, members.map((m) => m.task_ulid)), peopleOf(platform.rm, rows), liveFigures(platform, rows)])
  const byRoute = new Map<number, RouteTaskView[]>()
  for (const m of members) {
    const list = byRoute.get(Number(m.route_id)) ?? []
    list.push(viewOfRow(m))
    byRoute.set(Number(m.route_id), list)
  }
  return { routes: rows.map((r) => routeObject(r, byRoute.get(Number(r.id)) ?? [], details, people, live)), total, hasMore, last }
}

/**
 * The route as it was at `asOf`, folded from its stream (DESIGN §3.8), with each task's status as
 * of then from the task's own stream; addresses and windows do not change after creation.
 */
export async function routeAsOf(platform: Platform, current: RouteRow, state: RouteState, events: RecordedEvent[], asOf: Date): Promise<Route> {
  const statuses = await Promise.all(state.tasks.map(async (t) => (await taskStatusAsOf(platform.store, t.ulid, asOf)) ?? t.status ?? 'pending'))
  const lastOf = <K extends keyof typeof RouteEvents>(type: K) => {
    for (let i = events.length - 1; i >= 0; i--) { const e = events[i]; if (isEvent(RouteEvents, type, e)) return e }
    return undefined
  }
  const dateOf = (v: string | undefined) => (v === undefined ? null : new Date(v))
  const blocked = lastOf('RouteBlocked')
  const row: RouteRow = {
    ...current, name: state.name, status: state.status, driver_id: state.driverId, vehicle_id: state.vehicleId,
    capacity_grams: state.capacity.grams, capacity_volume_cm3: state.capacity.volume_cm3, capacity_packages: state.capacity.packages,
    blocked_reason: state.status === 'blocked' && blocked ? blocked.data.reason : null,
    published_at: dateOf(lastOf('RoutePublished')?.data.published_at), started_at: dateOf(lastOf('RouteStarted')?.data.started_at),
    finished_at: dateOf(lastOf('RouteFinished')?.data.finished_at),
    updated_at: events.length ? events[events.length - 1]!.recordedAt : current.created_at,
    // The driver and vehicle of then may not be today's: looked up by id.
    driver_name: undefined, vehicle_name: undefined, vehicle_plate: undefined,
  }
  const tasks = state.tasks.map((t, i) => ({ ulid: t.ulid, type: t.type, status: statuses[i]!, shipment_id: t.shipment_id, load: t.load }))
  const [details, people] = await Promise.all([taskDetails(platform.rm, tasks.map((t) => t.ulid)), peopleOf(platform.rm, [row])])
  return routeObject(row, tasks, details, people)
}

/** An active driver of the organization, or undefined. */
export const activeDriver = (db: Kysely<ReadModelDatabase>, orgId: string, userId: string) =>
  db.selectFrom('users').select(['id', 'name']).where('id', '=', userId).where('organization_id', '=', orgId)
    .where('role', '=', 'driver').where('status', '=', 'active').executeTakeFirst()

/** A vehicle of the organization with its capacity, or undefined. */
export const orgVehicle = (db: Kysely<ReadModelDatabase>, orgId: string, vehicleId: string) =>
  db.selectFrom('vehicles').select(['id', 'capacity_grams', 'capacity_volume_cm3', 'capacity_packages'])
    .where('id', '=', vehicleId).where('organization_id', '=', orgId).executeTakeFirst()

/** `{success, route}` of a command's answer, read back after the projections passed the write. */
export async function routeEnvelope(platform: Platform, orgId: string, id: number) {
  const route = await readRoute(platform, { organizationId: orgId, driverId: null }, id)
  if (!route) throw new NotFoundError('Route')
  return { success: true, route }
}

/** What the fast path read before deciding: enough to answer without reading the route again. */
export interface RouteReads {
  row: RouteRow
  /** Address and windows of the route's tasks and of the tasks the command named. */
  details: Map<string, { address: unknown; time_windows: unknown }>
  /** The members' statuses as read. */
  statuses: Map<string, TaskStatusName>
}

/**
 * The route object after a task change decided on `reads`: the new order from the state, statuses
 * as read (a task added carries its own), the row's `updated_at` moved to the change. The write has
 * been projected before this answers (the command waited), so a GET afterwards shows the same.
 */
export async function routeAfterChange(db: Kysely<ReadModelDatabase>, reads: RouteReads, state: RouteState, changedAt: string): Promise<Route> {
  const row = { ...reads.row, updated_at: new Date(changedAt) }
  const tasks = state.tasks.map((t) => ({ ulid: t.ulid, type: t.type, status: reads.statuses.get(t.ulid) ?? t.status ?? 'pending', shipment_id: t.shipment_id, load: t.load }))
  return routeObject(row, tasks, reads.details, await peopleOf(db, [row]))
}
