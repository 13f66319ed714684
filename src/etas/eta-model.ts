import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { idOf } from '../../schemas/events/streams.js'
import { drivablePoint, type Point } from '../infrastructure/geo/precision.js'
import { RouteEvents, TaskRouteMarkers } from '../../schemas/events/routes.js'
import { TaskEvents, type TaskArrived } from '../../schemas/events/tasks.js'
import { TaskDelayEvents } from '../../schemas/events/task-delays.js'
import type { RecordedOf } from '../../projections/projection.js'
import { progressOf } from '../../projections/routes/progress.js'
import {
  computeEtas, haversineM, isOpen, learnedSpeedKmh, legCounts, type EtaBasis, type RouteStatus, type StopStatus, type TimeWindow,
} from './eta-method.js'
import { decideDelay, evolveDelay, type BackOnTimeRequest, type DelayRequest, type EtaSeen } from './delay-rule.js'
import { latenessOf } from './lateness.js'
import { etaView, type StatedEtaTimes } from './eta-payload.js'

/**
 * The ETA engine's state and its rules, without I/O: events and position batches in, the ETA read
 * model's changes out. Deterministic: the same inputs in the same order give the same rows (a
 * rebuild replays them, docs/decisions.md "ETAs"), so every time in it comes from an input (an
 * event's `occurred_at`, a batch's `received_at`, a journalled tick), never from a clock.
 */

export interface EtaSettings {
  speedKmh: number
  delayThresholdMs: number
}

export type { RouteStatus }

export interface RouteState {
  routeId: number
  organizationId: string
  driverId: string | null
  status: RouteStatus
  start: Point | null
  startedAt: number | null
  taskUlids: string[]
  position: { point: Point; recordedAt: number } | null
  legMeters: number
  legMs: number
  /** The last computation (never goes back: an input stamped earlier computes as of this). */
  computedAt: number | null
  /** The last `task.eta` frame's number in the route's stream. */
  etaSeq: number
}

/** The ETA as stated, with the window it was measured against and since when it is late (src/etas/lateness.ts). */
export interface StatedEta extends StatedEtaTimes {}

export interface TaskState {
  ulid: string
  organizationId: string
  routeId: number | null
  status: StopStatus
  point: Point | null
  windows: TimeWindow[]
  serviceMs: number
  arrivedAt: number | null
  finalAt: number | null
  /** The ETA as last stated (restated when it moves by a minute or more). */
  eta: StatedEta | null
  historySeq: number
  /** The last TaskDelayed's time, from the log. */
  delayedAt: number | null
  /** When an ETA was last seen back inside the window after the last delay. */
  backInsideAt: number | null
}

export interface HistoryRow {
  task_ulid: string; seq: number; route_id: number; organization_id: string; computed_at: number
  eta_at: number; eta_from: number; eta_to: number; basis: EtaBasis; stops_ahead: number
  window_from: number | null; window_to: number | null
}

/** A task's arrival or end, fixed into its history rows (predicted against actual). */
export interface HistoryFix { ulid: string; arrivedAt: number | null; outcome: string | null }

export interface FeedRow { route_id: number; seq: number; task_ulid: string; data: Record<string, unknown> }

/** A TaskDelayed asked for, and a task back on time (the delay rule's, delay-rule.ts). */
export type { BackOnTimeRequest, DelayRequest } from './delay-rule.js'


/** A restatement moves by at least this much (DESIGN §3.10: "by a minute or more"). */
export const RESTATE_MS = 60_000
/** A tick recomputes a started route not computed for this long (a driver that stopped reporting). */
export const TICK_STALE_MS = 30_000

/**
 * The events the engine reads: its routes' streams and its tasks' (the task module's events, the
 * routes' markers and its own delays); `e.type` narrows `e.data`. Other types reach it only as
 * skipped no-ops (the engine subscribes to these names).
 */
export const ETA_EVENTS = { ...RouteEvents, ...TaskEvents, ...TaskRouteMarkers, ...TaskDelayEvents }
export type EtaEvent = RecordedOf<typeof ETA_EVENTS>
/** The one cast: the engine's subscription hands the model its events only (unknown types fall through every branch). */
const asEta = (events: readonly RecordedEvent[]) => events as readonly EtaEvent[]

/** When a finished task finished: completed, failed or cancelled (empty for any other event: NaN when parsed). */
const finishedAt = (e: EtaEvent): string =>
  e.type === 'TaskCompleted' ? e.data.completed_at : e.type === 'TaskFailed' ? e.data.failed_at : e.type === 'TaskCancelled' ? e.data.cancelled_at : ''

const STATUS_OF: Record<string, StopStatus> = {
  TaskStarted: 'started', TaskArrived: 'arrived', TaskCompleted: 'complete', TaskFailed: 'failed', TaskCancelled: 'cancelled',
}
const ROUTE_STATUS_RANK: Record<RouteStatus, number> = { draft: 0, published: 1, started: 2, finished: 3 }
/** Routes whose driver's positions the model follows. */
const FOLLOWED: ReadonlySet<RouteStatus> = new Set(['published', 'started'])

export const eventTime = (e: RecordedEvent): number => {
  const t = Date.parse(e.metadata?.occurred_at ?? '')
  return Number.isNaN(t) ? e.recordedAt.getTime() : t
}
const parseWindows = (ws: readonly { from: string; to: string }[] | null | undefined): TimeWindow[] =>
  (ws ?? []).map((w) => ({ from: Date.parse(w.from), to: Date.parse(w.to) })).filter((w) => Number.isFinite(w.from) && Number.isFinite(w.to))

export class EtaModel {
  readonly routes = new Map<number, RouteState>()
  readonly tasks = new Map<string, TaskState>()
  /**
   * Routes out with a driver (published or started) by driver: complete whenever the engine holds its
   * lease (loaded with it, kept by the events). A published route keeps its driver's newest position
   * too, so it starts with one.
   */
  readonly followedByDriver = new Map<string, Set<number>>()
  /** What changed since the last `drain`. */
  private readonly dirtyRoutes = new Set<number>()
  private readonly dirtyTasks = new Set<string>()
  private history: HistoryRow[] = []
  private fixes = new Map<string, HistoryFix>()
  private feed: FeedRow[] = []
  private delays: DelayRequest[] = []
  private backOnTime: BackOnTimeRequest[] = []

  constructor(readonly settings: EtaSettings) {}

  // ── What a batch needs from storage ────────────────────────────────────────────────────────

  /** Routes and tasks the events name that the model does not hold (load them, then `applyEvents`). */
  missingFor(events: readonly RecordedEvent[]): { routeIds: number[]; ulids: string[] } {
    const routeIds = new Set<number>()
    const ulids = new Set<string>()
    for (const e of asEta(events)) {
      const id = idOf.route(e.streamId)
      const ulid = idOf.task(e.streamId)
      if (id !== null) {
        if (e.type !== 'RouteCreated' && !this.routes.has(id)) routeIds.add(id)
        if (e.type === 'RouteTasksAdded') for (const t of e.data.tasks) if (!this.tasks.has(t.ulid)) ulids.add(t.ulid)
      } else if (ulid !== null && e.type !== 'TaskCreated' && !this.tasks.has(ulid)) ulids.add(ulid)
    }
    return { routeIds: [...routeIds], ulids: [...ulids] }
  }

  /** Routes of held tasks, and tasks of held routes, that are not held (a recomputation needs the whole route). */
  missingAround(): { routeIds: number[]; ulids: string[] } {
    const routeIds = new Set<number>()
    const ulids = new Set<string>()
    for (const t of this.tasks.values()) if (t.routeId !== null && !this.routes.has(t.routeId)) routeIds.add(t.routeId)
    for (const r of this.routes.values()) for (const u of r.taskUlids) if (!this.tasks.has(u)) ulids.add(u)
    return { routeIds: [...routeIds], ulids: [...ulids] }
  }

  holdRoute(r: RouteState): void {
    if (!this.routes.has(r.routeId)) this.routes.set(r.routeId, r)
  }

  holdTask(t: TaskState): void {
    if (!this.tasks.has(t.ulid)) this.tasks.set(t.ulid, t)
  }

  /** The published and started routes' drivers, as stored (the engine loads them when it takes the lease). */
  indexFollowed(rows: readonly { routeId: number; driverId: string | null }[]): void {
    this.followedByDriver.clear()
    for (const r of rows) if (r.driverId !== null) this.index(r.driverId, r.routeId, true)
  }

  /** The driver's routes that follow its positions (published or started). */
  followedRoutesOf(driverId: string): number[] {
    return [...(this.followedByDriver.get(driverId) ?? [])]
  }

  /** Every route out with a driver (a tick loads them and recomputes the started ones). */
  allFollowedRoutes(): number[] {
    return [...this.followedByDriver.values()].flatMap((s) => [...s])
  }

  /** Forgets what is held (after a flush: it is all stored), keeping the index of started routes. */
  evict(): void {
    this.routes.clear()
    this.tasks.clear()
  }

  // ── Inputs ─────────────────────────────────────────────────────────────────────────────────

  /**
   * A run of events in log order: each changes the state, and every started route they touched is
   * recomputed once at the end, as of the newest of its events (the runs are the engine's rounds,
   * journalled, so a rebuild sees the same runs).
   */
  applyEvents(events: readonly RecordedEvent[]): void {
    const touched = new Map<number, number>()
    const touch = (routeId: number | null, at: number) => {
      if (routeId !== null) touched.set(routeId, Math.max(touched.get(routeId) ?? at, at))
    }
    for (const e of asEta(events)) this.applyEvent(e, touch)
    for (const [routeId, at] of touched) this.recompute(routeId, at)
  }

  /** A stored batch of one driver's positions (one POST): its newest moves the driver, its receipt recomputes. */
  applyPositions(driverId: string, newest: { point: Point; recordedAt: number }, receivedAt: number): void {
    for (const routeId of this.followedRoutesOf(driverId)) {
      const r = this.routes.get(routeId)
      if (!r) continue
      if (!r.position || newest.recordedAt > r.position.recordedAt) {
        r.position = newest
        this.dirtyRoutes.add(routeId)
      }
      if (r.status === 'started') this.recompute(routeId, receivedAt)
    }
  }

  /** A clock tick: started routes not recomputed lately are, so ETAs move on when a driver goes quiet. */
  tick(at: number): void {
    for (const routeId of this.allFollowedRoutes()) {
      const r = this.routes.get(routeId)
      if (r?.status === 'started' && (r.computedAt === null || at - r.computedAt >= TICK_STALE_MS)) this.recompute(routeId, at)
    }
  }

  private applyEvent(e: EtaEvent, touch: (routeId: number | null, at: number) => void): void {
    const at = eventTime(e)
    const id = idOf.route(e.streamId)
    if (id !== null) {
      if (e.type === 'RouteCreated') {
        const d = e.data
        if (this.routes.has(id)) return
        this.routes.set(id, {
          routeId: id, organizationId: d.organization_id, driverId: d.driver_id, status: 'draft', start: drivablePoint(d.start_address) ?? null,
          startedAt: null, taskUlids: [], position: null, legMeters: 0, legMs: 0, computedAt: null, etaSeq: 0,
        })
        this.dirtyRoutes.add(id)
        return
      }
      const r = this.routes.get(id)
      if (!r) return
      this.dirtyRoutes.add(id)
      switch (e.type) {
        case 'RouteUpdated': {
          const d = e.data
          if (d.driver_id !== undefined && d.driver_id !== r.driverId) this.setDriver(r, d.driver_id)
          break
        }
        case 'RoutePublished': {
          const d = e.data
          if (d.driver_id !== r.driverId) this.setDriver(r, d.driver_id)
          this.setStatus(r, 'published')
          break
        }
        case 'RouteStarted':
          r.startedAt ??= Date.parse(e.data.started_at)
          this.setStatus(r, 'started')
          break
        case 'RouteFinished': this.setStatus(r, 'finished'); break
        case 'RouteTasksAdded': {
          const d = e.data
          const added: string[] = []
          for (const s of d.tasks) {
            if (r.taskUlids.includes(s.ulid) || added.includes(s.ulid)) continue
            added.push(s.ulid)
            const t = this.tasks.get(s.ulid) ?? this.placeholder(s.ulid, r.organizationId, s.status ?? 'pending')
            t.routeId = id
            this.dirtyTasks.add(t.ulid)
          }
          r.taskUlids.splice(Math.max(0, Math.min(d.index, r.taskUlids.length)), 0, ...added)
          break
        }
        case 'RouteTaskRemoved': {
          const d = e.data
          r.taskUlids = r.taskUlids.filter((u) => u !== d.task_ulid)
          const t = this.tasks.get(d.task_ulid)
          if (t && t.routeId === id) { t.routeId = null; this.state(t, null, at) }
          break
        }
        case 'RouteTasksReordered': {
          const order = e.data.task_ulids
          const known = new Set(r.taskUlids)
          r.taskUlids = [...order.filter((u) => known.has(u)), ...r.taskUlids.filter((u) => !order.includes(u))]
          break
        }
        default: return
      }
      touch(id, at)
      return
    }
    const ulid = idOf.task(e.streamId)
    if (ulid === null) return
    if (e.type === 'TaskCreated') {
      const d = e.data
      const known = this.tasks.get(ulid)
      const t: TaskState = {
        ...(known ?? this.placeholder(ulid, d.organization_id, 'pending')),
        organizationId: d.organization_id, point: drivablePoint(d.address) ?? null, windows: parseWindows(d.time_windows),
        serviceMs: (d.duration_minutes ?? 0) * 60_000,
      }
      this.tasks.set(ulid, t)
      this.dirtyTasks.add(ulid)
      touch(t.routeId, at)
      return
    }
    const t = this.tasks.get(ulid)
    if (!t) return
    switch (e.type) {
      case 'TaskRouted': t.routeId = e.data.route_id; break
      case 'TaskUnrouted':
        if (t.routeId === e.data.route_id) { touch(t.routeId, at); t.routeId = null; this.state(t, null, at) }
        break
      case 'TaskDelayed': t.delayedAt = Date.parse(e.data.delayed_at); break
      default: {
        const status = STATUS_OF[e.type]
        if (!status) return
        t.status = status
        if (e.type === 'TaskArrived') this.arrived(t, e.data)
        else if (e.type !== 'TaskStarted') {
          t.finalAt = Date.parse(finishedAt(e))
          if (status !== 'cancelled') t.arrivedAt ??= t.finalAt
          this.fix(t.ulid, { outcome: status, arrivedAt: status === 'cancelled' ? null : t.arrivedAt })
        }
        touch(t.routeId, at)
      }
    }
    this.dirtyTasks.add(ulid)
  }

  /** The first arrival fixes the history, and a leg driven teaches the route its driver's speed. */
  private arrived(t: TaskState, d: TaskArrived): void {
    const arrivedAt = Date.parse(d.arrived_at)
    if (t.arrivedAt !== null) return
    t.arrivedAt = arrivedAt
    this.fix(t.ulid, { arrivedAt, outcome: null })
    const r = t.routeId === null ? undefined : this.routes.get(t.routeId)
    if (!r || d.skipped || !t.point) return
    let from: { point: Point; at: number } | null = null
    for (const u of r.taskUlids) {
      const s = this.tasks.get(u)
      if (!s?.point || s.finalAt === null || (s.status !== 'complete' && s.status !== 'failed') || s.finalAt > arrivedAt) continue
      if (!from || s.finalAt > from.at) from = { point: s.point, at: s.finalAt }
    }
    if (!from) return
    const meters = haversineM(from.point, t.point)
    const ms = arrivedAt - from.at
    if (legCounts(meters, ms, arrivedAt, t.windows, this.settings.speedKmh)) {
      r.legMeters += meters
      r.legMs += ms
      this.dirtyRoutes.add(r.routeId)
    }
  }

  private fix(ulid: string, f: { arrivedAt: number | null; outcome: string | null }): void {
    const prev = this.fixes.get(ulid)
    this.fixes.set(ulid, { ulid, arrivedAt: prev?.arrivedAt ?? f.arrivedAt, outcome: f.outcome ?? prev?.outcome ?? null })
  }

  private placeholder(ulid: string, organizationId: string, status: StopStatus): TaskState {
    const t: TaskState = {
      ulid, organizationId, routeId: null, status, point: null, windows: [], serviceMs: 0, arrivedAt: null, finalAt: null,
      eta: null, historySeq: 0, delayedAt: null, backInsideAt: null,
    }
    this.tasks.set(ulid, t)
    return t
  }

  private index(driverId: string, routeId: number, on: boolean): void {
    let set = this.followedByDriver.get(driverId)
    if (on) {
      if (!set) this.followedByDriver.set(driverId, (set = new Set()))
      set.add(routeId)
    } else if (set) {
      set.delete(routeId)
      if (set.size === 0) this.followedByDriver.delete(driverId)
    }
  }

  private setDriver(r: RouteState, driverId: string | null): void {
    if (FOLLOWED.has(r.status) && r.driverId !== null) this.index(r.driverId, r.routeId, false)
    r.driverId = driverId
    // Another driver: where the last one was says nothing of this one.
    r.position = null
    if (FOLLOWED.has(r.status) && driverId !== null) this.index(driverId, r.routeId, true)
  }

  private setStatus(r: RouteState, status: RouteStatus): void {
    if (ROUTE_STATUS_RANK[status] < ROUTE_STATUS_RANK[r.status]) return
    if (r.driverId !== null) this.index(r.driverId, r.routeId, FOLLOWED.has(status))
    r.status = status
  }

  // ── Computation ────────────────────────────────────────────────────────────────────────────

  private recompute(routeId: number, trigger: number): void {
    const r = this.routes.get(routeId)
    if (!r) return
    const tasks = r.taskUlids.map((u) => this.tasks.get(u)).filter((t): t is TaskState => t !== undefined)
    if (r.status !== 'started') {
      for (const t of tasks) this.state(t, null, trigger)
      return
    }
    const now = Math.max(trigger, r.computedAt ?? trigger)
    r.computedAt = now
    this.dirtyRoutes.add(routeId)
    const speed = learnedSpeedKmh(this.settings.speedKmh, { meters: r.legMeters, ms: r.legMs })
    const etas = new Map(computeEtas({ stops: tasks, start: r.start, startedAt: r.startedAt, position: r.position }, now, speed).map((e) => [e.ulid, e]))
    let progress: ReturnType<typeof progressOf> | undefined
    tasks.forEach((t, i) => {
      const e = etas.get(t.ulid)
      if (!e) { this.state(t, null, now); return }
      const prev = t.eta
      const lateness = latenessOf(e.at, e.window, prev, now)
      this.watchDelay(t, e.at, e.window, e.lateMs, now, lateness.lateSince ?? now)
      const moved = !prev || prev.basis !== e.basis || Math.abs(prev.at - e.at) >= RESTATE_MS ||
        Math.abs(prev.from - e.from) >= RESTATE_MS || Math.abs(prev.to - e.to) >= RESTATE_MS || prev.windowTo !== lateness.windowTo
      if (!moved) return
      const stated: StatedEta = { at: e.at, from: e.from, to: e.to, basis: e.basis, computedAt: now, ...lateness }
      this.state(t, stated, now)
      t.historySeq++
      this.history.push({
        task_ulid: t.ulid, seq: t.historySeq, route_id: routeId, organization_id: t.organizationId, computed_at: now,
        eta_at: e.at, eta_from: e.from, eta_to: e.to, basis: e.basis, stops_ahead: e.stopsAhead,
        window_from: e.window?.from ?? null, window_to: e.window?.to ?? null,
      })
      progress ??= progressOf(tasks.map((x) => x.status))
      r.etaSeq++
      this.feed.push({
        route_id: routeId, seq: r.etaSeq, task_ulid: t.ulid,
        data: {
          route_id: routeId, task_ulid: t.ulid, position: i + 1, status: t.status,
          eta: etaView(stated), progress,
        },
      })
    })
  }

  private state(t: TaskState, eta: StatedEta | null, _at: number): void {
    if (eta === null && t.eta === null) return
    t.eta = eta
    this.dirtyTasks.add(t.ulid)
  }

  /**
   * DESIGN §3.10: late by the threshold → TaskDelayed, once; back inside the window (at or before its
   * end) re-arms it (the pure rule: delay-rule.ts). The request is only a wish: the task's stream decides (delay-task.ts).
   */
  private watchDelay(t: TaskState, at: number, window: TimeWindow | null, lateMs: number | null, now: number, lateSince: number): void {
    const seen: EtaSeen = { ulid: t.ulid, organizationId: t.organizationId, at, window, lateMs, now, lateSince }
    for (const output of decideDelay(seen, t, this.settings.delayThresholdMs)) {
      if (output.action === 'Send') this.delays.push(output.message)
      else if (output.action === 'BackOnTime') this.backOnTime.push(output.message)
    }
    const { backInsideAt } = evolveDelay(t, seen)
    if (backInsideAt !== t.backInsideAt) {
      t.backInsideAt = backInsideAt
      this.dirtyTasks.add(t.ulid)
    }
  }

  // ── Output ─────────────────────────────────────────────────────────────────────────────────

  /** Everything changed since the last drain, to be written in one round. */
  drain() {
    const out = {
      routes: [...this.dirtyRoutes].map((id) => this.routes.get(id)).filter((r): r is RouteState => r !== undefined),
      tasks: [...this.dirtyTasks].map((u) => this.tasks.get(u)).filter((t): t is TaskState => t !== undefined),
      history: this.history,
      fixes: [...this.fixes.values()],
      feed: this.feed,
      delays: this.delays,
      backOnTime: this.backOnTime,
    }
    this.dirtyRoutes.clear()
    this.dirtyTasks.clear()
    this.history = []
    this.fixes = new Map()
    this.feed = []
    this.delays = []
    this.backOnTime = []
    return out
  }
}

export type RoundOutput = ReturnType<EtaModel['drain']>

export { isOpen }
