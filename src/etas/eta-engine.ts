import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import { readModelIn, type ReadModelDatabase } from '../../projections/read-model-database.js'
import type { EventStore, RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { type BusLogger, silentLogger } from '../infrastructure/bus/bus.js'
import { Wakeup } from '../shared/wakeup.js'
import { runStepLoop } from '../shared/step-loop.js'
import { idOf } from '../../schemas/events/streams.js'
import { TaskDelayEvents } from '../../schemas/events/task-delays.js'
import { isEvent } from '../../schemas/events/event-map.js'
import { READ_MODEL_SCHEMA } from '../infrastructure/database/migrate.js'
import { batchesAfter, POSITIONS_CHANNEL, POSITIONS_START, type PositionBatch } from '../positions/positions-table.js'
import { delayTask } from './delay-task.js'
import { markBackOnTime } from './back-on-time.js'
import { EtaModel, type BackOnTimeRequest, type DelayRequest, type EtaSettings } from './eta-model.js'
import {
  acquireLease, type Checkpoint, journal, takeEtaLock, loadRoutes, loadFollowedIndex, loadTasks, moveCheckpoint, notifyFrames, releaseLease, writeOutput,
} from './eta-tables.js'

export interface EtaEngineOptions {
  /** Platform tables (positions, journal) and, through `schema`, the ETA read model. */
  db: Kysely<any>
  /** The log as this process tails it (the projector's shared reads). */
  log: EventStore
  /** Where TaskDelayed is appended. */
  store: EventStore
  /** LISTEN, so positions stored by any process wake this engine. */
  listen?: ((channel: string, onNotify: (payload: string) => void) => Promise<() => Promise<void>>) | undefined
  settings: EtaSettings
  /** The platform's clock: ticks are stamped with it (and journalled). */
  clock: () => Date
  /** Platform time between ticks (default a minute). */
  tickMs?: number
  /** Real time between looks when nothing wakes it (default 1 s). */
  pollMs?: number
  leaseMs?: number
  eventBatch?: number
  positionBatch?: number
  logger?: BusLogger
  schema?: string
}

/** Tasks held in memory before the model forgets what it holds (all of it is stored each round). */
const MAX_HELD_TASKS = 50_000

/**
 * The ETA engine (DESIGN §3.10): one active per database (a lease, like the relay's), it follows the
 * log (task and route events) and drivers' positions, keeps the ETA read model (projections/etas),
 * sends `task.eta` frames and asks for TaskDelayed. Each round reads events and position batches
 * after its checkpoint, applies the events, a clock tick when due, then the batches, and writes the
 * state, outputs, checkpoint and (for rounds with events or a tick) a journal entry in one
 * transaction. The journal makes a rebuild replay the same inputs in the same order
 * (src/etas/eta-replay.ts). While it holds the lease its model is the state; losing a round (the
 * lease moved) drops the model, which is loaded again from the tables.
 */
export class EtaEngine {
  readonly owner = randomUUID()
  private readonly wakeup = new Wakeup()
  private readonly schema: string
  private readonly rm: Kysely<ReadModelDatabase>
  private readonly tickMs: number
  private readonly pollMs: number
  private readonly leaseMs: number
  private readonly eventBatch: number
  private readonly positionBatch: number
  private readonly logger: BusLogger
  private stopped = true
  private loopDone: Promise<void> = Promise.resolve()
  private unsubscribe: (() => void) | undefined
  private unlisten: (() => Promise<void>) | undefined
  /** While leader: the model, where it stands, when the lease was renewed, when it last ticked. */
  private model: EtaModel | undefined
  private checkpoint: Checkpoint | undefined
  private renewedAt = 0
  private lastTick = 0
  /** TaskDelayed asked for and not yet seen in the log, by task (with its episode): asked once. */
  private readonly asked = new Map<string, number | null>()
  /** Rounds written, and their positions' latencies (the benchmark reads them). */
  rounds = 0

  constructor(private readonly o: EtaEngineOptions) {
    this.schema = o.schema ?? READ_MODEL_SCHEMA
    this.rm = readModelIn(o.db, this.schema)
    this.tickMs = o.tickMs ?? 60_000
    this.pollMs = o.pollMs ?? 1000
    this.leaseMs = o.leaseMs ?? 3000
    this.eventBatch = o.eventBatch ?? 1000
    this.positionBatch = o.positionBatch ?? 5000
    this.logger = o.logger ?? silentLogger
  }

  get isActive(): boolean { return this.model !== undefined }

  async start(): Promise<void> {
    if (!this.stopped) return
    this.stopped = false
    this.unsubscribe = this.o.log.onAppended(() => this.wakeup.kick())
    if (this.o.listen) this.unlisten = await this.o.listen(POSITIONS_CHANNEL, () => this.wakeup.kick())
    this.loopDone = this.loop()
  }

  /** Stops after the round in flight and gives the lease up, so another process's engine takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    this.unsubscribe?.()
    await this.unlisten?.().catch(() => undefined)
    this.wakeup.kick()
    await this.loopDone
    if (this.model) await releaseLease(this.rm, this.schema, this.owner).catch(() => undefined)
    this.model = undefined
  }

  kick(): void { this.wakeup.kick() }

  private loop(): Promise<void> {
    return runStepLoop({
      stopped: () => this.stopped,
      step: () => this.step(),
      // Idle or standby alike: look again a few times per lease period.
      rest: () => this.wakeup.sleep(Math.min(this.pollMs, this.leaseMs / 3)),
      failed: (err) => {
        this.drop()
        this.logger.error({ err }, 'ETA engine round failed; retrying')
      },
      wakeup: this.wakeup,
    })
  }

  private drop(): void {
    this.model = undefined
    this.checkpoint = undefined
    this.asked.clear()
  }

  /** One round. `more`: a batch was full; `idle`: caught up; `standby`: another engine holds the lease. */
  async step(): Promise<'more' | 'idle' | 'standby'> {
    if (!this.model || Date.now() - this.renewedAt >= this.leaseMs / 3) {
      const cp = await acquireLease(this.rm, this.schema, this.owner, this.leaseMs, { log: this.o.log.startPosition, positions: POSITIONS_START })
      if (!cp) {
        if (this.model) this.logger.warn({}, 'ETA engine lease taken by another process')
        this.drop()
        return 'standby'
      }
      this.renewedAt = Date.now()
      if (!this.model || cp.previousOwner !== this.owner || !this.checkpoint || this.checkpoint.log !== cp.log || this.checkpoint.positions !== cp.positions) {
        // Taking over (or our view went stale): the tables are the state.
        const model = new EtaModel(this.o.settings)
        model.indexFollowed(await loadFollowedIndex(this.rm))
        this.model = model
        this.checkpoint = { log: cp.log, positions: cp.positions }
        this.asked.clear()
        this.logger.info({ owner: this.owner }, 'ETA engine active')
      }
    }
    const model = this.model!
    const from = this.checkpoint!
    const [read, positions] = await Promise.all([
      this.o.log.readAll(from.log, this.eventBatch),
      batchesAfter(this.o.db, from.positions, this.positionBatch),
    ])
    const now = this.o.clock().getTime()
    const tickAt = now - this.lastTick >= this.tickMs ? now : null
    const events = read.events
    if (events.length === 0 && positions.batches.length === 0 && tickAt === null) return 'idle'

    await prepare(this.rm, model, events, positions.batches, tickAt !== null)
    model.applyEvents(events)
    if (tickAt !== null) model.tick(tickAt)
    for (const b of positions.batches) model.applyPositions(b.driverId, { point: { lat: b.newest.lat, lng: b.newest.lng }, recordedAt: b.newest.recordedAt }, b.receivedAt)
    const out = model.drain()
    const to: Checkpoint = { log: read.checkpoint, positions: positions.cursor }
    const held = await this.rm.transaction().execute(async (trx) => {
      await takeEtaLock(trx)
      if (!(await moveCheckpoint(trx, this.schema, this.owner, this.leaseMs, from, to))) return false
      await writeOutput(trx, this.schema, out)
      if (events.length > 0 || tickAt !== null) await journal(trx, to.log, from.positions, tickAt)
      await notifyFrames(trx, out.feed.map((f) => f.route_id))
      return true
    })
    if (!held) {
      this.logger.warn({}, 'ETA engine lost its lease during a round; the new owner carries on')
      this.drop()
      return 'standby'
    }
    this.checkpoint = to
    this.renewedAt = Date.now()
    if (tickAt !== null) this.lastTick = tickAt
    this.rounds++
    this.forgetAsked(events)
    await this.askForDelays(out.delays)
    await this.askBackOnTime(out.backOnTime)
    if (model.tasks.size > MAX_HELD_TASKS) model.evict()
    // Something came: look again at once (under load the rounds run back to back, each taking what arrived meanwhile).
    return 'more'
  }

  private forgetAsked(events: readonly RecordedEvent[]): void {
    for (const e of events) {
      const ulid = isEvent(TaskDelayEvents, 'TaskDelayed', e) ? idOf.task(e.streamId) : null
      if (ulid !== null) this.asked.delete(ulid)
    }
  }

  /** TaskDelayed through the task's stream (its decider has the last word); once per episode from here. */
  private async askForDelays(requests: readonly DelayRequest[]): Promise<void> {
    for (const r of requests) {
      if (this.asked.has(r.ulid) && this.asked.get(r.ulid) === r.backInsideAt) continue
      this.asked.set(r.ulid, r.backInsideAt)
      try {
        await delayTask(this.o.store, {
          type: 'DelayTask',
          data: { ulid: r.ulid, eta: new Date(r.eta), window_to: new Date(r.windowTo), minutes_late: r.minutesLate, back_inside_at: r.backInsideAt === null ? null : new Date(r.backInsideAt), now: new Date(r.now), late_since: new Date(r.lateSince) },
        }, { now: new Date(r.now), actor: { kind: 'system', id: 'eta-engine' } })
      } catch (err) {
        this.asked.delete(r.ulid)
        this.logger.warn({ err, task: r.ulid }, 'ETA engine: recording TaskDelayed failed; asked again on the next computation')
      }
    }
  }

  /** TaskBackOnTime through the task's stream (asked once: the model asks again only after another delay). */
  private async askBackOnTime(requests: readonly BackOnTimeRequest[]): Promise<void> {
    for (const r of requests) {
      try {
        await markBackOnTime(this.o.store, { type: 'MarkBackOnTime', data: { ulid: r.ulid, eta: new Date(r.eta), window_to: new Date(r.windowTo), now: new Date(r.now) } },
          new Date(r.delayedAt), { now: new Date(r.now), actor: { kind: 'system', id: 'eta-engine' } })
      } catch (err) {
        this.logger.warn({ err, task: r.ulid }, 'ETA engine: recording TaskBackOnTime failed')
      }
    }
  }
}

/** Loads what the inputs touch and the model does not hold: their routes with all their tasks. */
export async function prepare(rm: Kysely<ReadModelDatabase>, model: EtaModel, events: readonly RecordedEvent[], batches: readonly PositionBatch[], tick: boolean): Promise<void> {
  let need = model.missingFor(events)
  const routeIds = new Set(need.routeIds)
  for (const b of batches) for (const id of model.followedRoutesOf(b.driverId)) if (!model.routes.has(id)) routeIds.add(id)
  if (tick) for (const id of model.allFollowedRoutes()) if (!model.routes.has(id)) routeIds.add(id)
  need = { routeIds: [...routeIds], ulids: need.ulids }
  // Until every route of a held task and every task of a held route is held; what is nowhere stored
  // is asked for once (a task made by an event of this batch, or one the model never saw).
  const asked = new Set<string>()
  const askedRoutes = new Set<number>()
  while (need.routeIds.length || need.ulids.length) {
    for (const u of need.ulids) asked.add(u)
    for (const id of need.routeIds) askedRoutes.add(id)
    const [routes, tasks] = await Promise.all([loadRoutes(rm, need.routeIds), loadTasks(rm, need.ulids)])
    for (const r of routes) model.holdRoute(r)
    for (const t of tasks) model.holdTask(t)
    const around = model.missingAround()
    need = { routeIds: around.routeIds.filter((id) => !askedRoutes.has(id)), ulids: around.ulids.filter((u) => !asked.has(u)) }
  }
}
