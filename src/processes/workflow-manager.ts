import type { Bus, BusLogger, Delivery, Subscription } from '../infrastructure/bus/bus.js'
import { silentLogger } from '../infrastructure/bus/bus.js'
import { ConcurrencyError, type RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { appendDecided, awaitReadModels, type CommandContext, type DecidedAppend } from '../shared/command-handler.js'
import type { Platform } from '../platform.js'
import { ValidationError } from '../shared/errors.js'
import { findVersion } from '../blueprints/queries.js'
import { taskStream } from '../tasks/task.js'
import { newTask } from '../tasks/create-task.js'
import {
  attemptsOf, evolve, fold, latestTasksOf, pendingActions, workflowStream, type PlannedAction, type WorkflowEvent, type WorkflowState,
} from '../workflows/workflow.js'
import * as recordTask from '../workflows/record-task.js'
import * as takeAction from '../workflows/take-action.js'
import * as emitEvent from '../workflows/emit-event.js'
import * as completeWorkflow from '../workflows/complete-workflow.js'
import * as failWorkflow from '../workflows/fail-workflow.js'
import * as markInProgress from '../workflows/mark-in-progress.js'
import * as markScheduled from '../workflows/mark-scheduled.js'
import * as parkAction from '../workflows/park-action.js'
import { stepTask } from '../workflows/workflow-tasks.js'
import { ulidFromKey } from '../shared/ids.js'
import { isScheduled, scheduleFacts } from '../workflows/schedule.js'
import { startWorkflow } from '../workflows/start-workflow.js'
import { cancelTasks } from '../workflows/cancel-workflow.js'
import { handlerFromFirstStart } from './consumer-start.js'
import { eventOf } from './relay.js'
import { idOf } from '../../schemas/events/streams.js'
import { TaskEvents } from '../../schemas/events/tasks.js'
import { isEvent } from '../../schemas/events/event-map.js'
import { fieldOf, idFieldOf, textOf } from '../infrastructure/event-store/payload.js'

/** What the workflow shows of a failure: a refused command's field errors too (e.g. a start_workflow's missing data). */
const errorText = (err: unknown): string =>
  err instanceof ValidationError ? `${err.message} ${Object.entries(err.errors).map(([k, v]) => `${k}: ${(v ?? []).join(' ')}`).join('; ')}`
    : err instanceof Error ? err.message : String(err)

export const WORKFLOW_MANAGER_CONSUMER = 'workflow-manager'
/** Task events: the outcomes that run a step's actions, starts (in_progress), and TaskRouted (scheduled). */
export const WORKFLOW_MANAGER_SUBJECTS = ['events.task.>']

/**
 * The port through which `set_shipment_status` changes a shipment (DESIGN §3.9: through the
 * shipment's own decider, `source: "routes"`). Implemented by the shipments module
 * (`setShipmentStatusFromRoutes` in src/shipments/routes-status.ts); until it is wired in, the
 * action is recorded as skipped for workflows with a shipment and logged.
 */
export interface ShipmentStatusPort {
  setShipmentStatusFromRoutes(
    platform: Platform, shipmentId: number, status: string, substatus: string | null, ctx: CommandContext,
    /** From the task's outcome: who signed a delivery, why it failed; `key` makes a repeat a no-op. */
    details: { key: string; signed_by?: string | null; reason?: string | null; occurred_at?: string | null },
  ): Promise<string>
}

export interface WorkflowManagerDeps {
  bus: Bus
  logger?: BusLogger
  shipments?: ShipmentStatusPort | undefined
  maxDeliveries?: number
  retryDelaysMs?: number[]
  /** Handlings at once in this process (across workflows; one workflow's are taken in turn). Default 64. */
  concurrency?: number
  /** Tests: called after each action is recorded (a throw here is a crash between two actions). */
  afterAction?: (key: string) => void | Promise<void>
}

const OUTCOMES: Record<string, 'complete' | 'failed' | undefined> = { TaskCompleted: 'complete', TaskFailed: 'failed' }
/** Events that start a task's work (the workflow goes in_progress); an outcome does too. */
const STARTS: Record<string, 'started_at' | 'arrived_at' | undefined> = { TaskStarted: 'started_at', TaskArrived: 'arrived_at' }
/**
 * A step a command skipped (`skipped: true`) is written with the event that skipped it, an
 * arrival or an outcome, in one append: that event moves the workflow on, so the skipped one is
 * passed over before any I/O (a complete of a pending task is one handling, not three).
 */
const isSkipped = (e: RecordedEvent) => fieldOf(e.data, 'skipped') === true
/** Entries kept by each of the manager's caches (oldest dropped first). */
const CACHE_ENTRIES = 10_000

/**
 * One handling at a time per workflow in this process, in arrival order: two events of one
 * workflow (two tasks' outcomes) would otherwise race for its stream, and the loser pays a failed
 * append and a second read. Other processes still race; the expected version settles that.
 */
class KeyedQueue {
  private readonly tails = new Map<number, Promise<unknown>>()
  run<T>(key: number, fn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve()
    const result = before.then(fn, fn)
    const tail = result.catch(() => undefined)
    this.tails.set(key, tail)
    void tail.then(() => { if (this.tails.get(key) === tail) this.tails.delete(key) })
    return result
  }
}

/** When an outcome happened (a skipped start carries the same time). */
const outcomeAt = (e: RecordedEvent): string | undefined => textOf(e.data, 'completed_at') ?? textOf(e.data, 'failed_at')

/** The workflow as this handling last saw it: the stream's version and its fold. */
interface Loaded { state: WorkflowState; version: number }

/** A bounded map for facts that never change once true (oldest entry dropped first). */
class FrozenCache<V> {
  private readonly map = new Map<string, V>()
  get(key: string): V | undefined { return this.map.get(key) }
  set(key: string, value: V): void {
    if (this.map.size >= CACHE_ENTRIES) this.map.delete(this.map.keys().next().value!)
    this.map.set(key, value)
  }
}

/**
 * The process manager of workflows (DESIGN §3.9): a durable consumer of task events. For a task
 * of a workflow it reads the workflow's stream and the blueprint VERSION the workflow started with,
 * and runs the step's actions in order, one at a time, each recorded in the workflow stream under
 * its idempotency key `workflow:<id>:step:<key>:attempt:<n>:action:<i>` and appended expecting the
 * stream's version:
 * - a redelivered event finds its keys spent and does nothing;
 * - a crash between two actions resumes at the first unspent key and repeats none;
 * - two processes racing on one workflow: one append wins, the other re-reads and finds the key spent;
 * - a task-making action appends its TaskCreated and its record in ONE atomic write, the task's
 *   ulid derived from the key: there is no window in which a task exists unrecorded;
 * - a cancel (or any final state) makes the decider refuse every later record: nothing runs after it.
 * Effects outside the two streams (cancelling tasks, another workflow, a shipment status) run before
 * their record and are idempotent by themselves (a final task is passed over; the started workflow
 * reserves the key in the same write; a shipment's decider ignores a repeated status).
 * A failing action is retried with the bus's delays, then recorded as parked (on the workflow's
 * `errors`) and dead-lettered (in /metrics).
 */
export class WorkflowManager {
  private subscription: Subscription | undefined
  private readonly logger: BusLogger
  /** The last position a handling appended (keyed by its context): read models are waited for once, at its end. */
  private readonly positions = new WeakMap<CommandContext, string>()
  /** Blueprint versions are frozen once published: read once per process. */
  private readonly versions = new FrozenCache<NonNullable<Awaited<ReturnType<typeof findVersion>>>>()
  /** A task's workflow (or none) never changes: learned from its TaskCreated as it passes, or read once. */
  private readonly taskWorkflows = new FrozenCache<number | null>()
  private readonly perWorkflow = new KeyedQueue()
  /** An outcome's start, recorded with the handling's first record (see STARTS). */
  private readonly progress = new WeakMap<CommandContext, { task_ulid: string; started_at: string }>()

  constructor(private readonly platform: Platform, private readonly deps: WorkflowManagerDeps) {
    this.logger = deps.logger ?? silentLogger
  }

  async start(): Promise<void> {
    if (this.subscription) return
    const handler = (delivery: Delivery) => this.handle(delivery)
    this.subscription = await this.deps.bus.subscribe({
      name: WORKFLOW_MANAGER_CONSUMER,
      subjects: WORKFLOW_MANAGER_SUBJECTS,
      maxDeliveries: this.deps.maxDeliveries ?? 6,
      retryDelaysMs: this.deps.retryDelaysMs ?? [200, 1_000, 5_000, 30_000, 120_000],
      // A handling mostly waits (the database, then the read models): more at once than the
      // bus's default keeps a burst of completions from queueing behind those waits.
      concurrency: this.deps.concurrency ?? 64,
    }, await handlerFromFirstStart(this.platform.db, this.platform.store, WORKFLOW_MANAGER_CONSUMER, handler))
  }

  async stop(): Promise<void> {
    const s = this.subscription
    this.subscription = undefined
    await s?.stop()
  }

  async handle(delivery: Delivery): Promise<void> {
    const event = eventOf(delivery)
    const ulid = textOf(event.data, 'ulid') ?? idOf.task(event.streamId)!
    if (isEvent(TaskEvents, 'TaskCreated', event)) {
      this.taskWorkflows.set(ulid, event.data.workflow_id ?? null)
      return
    }
    const routed = event.type === 'TaskRouted'
    if (!(routed || event.type in STARTS || event.type in OUTCOMES) || isSkipped(event)) return
    const workflowId = await this.workflowOfTask(ulid, event)
    if (!workflowId) return
    const ctx: CommandContext = {
      now: this.platform.clock(), actor: { kind: 'system', id: WORKFLOW_MANAGER_CONSUMER },
      causationId: event.id, correlationId: event.metadata?.correlation_id,
    }
    if (routed) {
      await this.perWorkflow.run(workflowId, () => this.schedule(workflowId, event, ctx))
      await this.settle(ctx)
      return
    }
    try {
      await this.perWorkflow.run(workflowId, () => this.run(workflowId, ulid, event, ctx))
      await this.settle(ctx)
    } catch (err) {
      // The last delivery: record the failure on the workflow before the bus parks the message.
      if (delivery.attempt >= delivery.maxDeliveries) await this.park(workflowId, ulid, event, err, delivery.attempt, ctx).catch(() => {})
      throw err
    }
  }

  /** The task's workflow id (null: none): named by the step itself, else from the cache or the task stream's first event. */
  private async workflowOfTask(ulid: string, event: RecordedEvent): Promise<number | null> {
    const named = idFieldOf(event.data, 'workflow_id')
    if (named !== undefined) return named
    const known = this.taskWorkflows.get(ulid)
    if (known !== undefined) return known
    const [first] = await this.platform.store.readStream(taskStream(ulid), { toPosition: event.position })
    const task = isEvent(TaskEvents, 'TaskCreated', first) ? first.data : undefined
    if (!task) return null // not readable: nothing to act on (and nothing to remember)
    this.taskWorkflows.set(ulid, task.workflow_id ?? null)
    return task.workflow_id ?? null
  }

  private async blueprintVersion(id: number, version: number) {
    const key = `${id}:${version}`
    const cached = this.versions.get(key)
    if (cached) return cached
    const row = await findVersion(this.platform.rm, id, version)
    if (row) this.versions.set(key, row)
    return row
  }

  /**
   * Runs what the event sets off, one recorded step at a time. The stream is read once; after each
   * record the state moves on by the events this handling appended (the append expected the
   * version, so nothing came in between). A lost race or an effect-only action reads it again.
   */
  private async run(workflowId: number, ulid: string, event: RecordedEvent, ctx: CommandContext): Promise<void> {
    let current: Loaded | undefined
    for (let round = 0; round < 100; round++) {
      const { state, version } = current ??= await this.load(workflowId)
      if (!state.exists) return
      const started = STARTS[event.type]
      if (started) {
        const at = textOf(event.data, started)
        await this.record(workflowId, state, version, markInProgress.decide({ type: 'MarkInProgress', data: { ...this.ids(state), task_ulid: ulid, started_at: at ?? ctx.now.toISOString() } }, state), ctx, [], { progress: true })
        return
      }
      const outcome = OUTCOMES[event.type]
      if (!outcome) return
      if (round === 0) this.progress.set(ctx, { task_ulid: ulid, started_at: outcomeAt(event) ?? ctx.now.toISOString() })
      const { blueprint } = state.created!
      const version_ = await this.blueprintVersion(blueprint.id, blueprint.version)
      if (!version_) throw new Error(`blueprint ${blueprint.id} version ${blueprint.version} is not in the read model yet`)
      const [next] = pendingActions(state, version_.steps ?? [], ulid, outcome)
      if (!next) {
        // No action (left): the start the outcome stands for may still be unrecorded.
        const p = this.progress.get(ctx)
        if (p) await this.record(workflowId, state, version, markInProgress.decide({ type: 'MarkInProgress', data: { ...this.ids(state), ...p } }, state), ctx, [], { progress: true })
        return
      }
      try {
        current = await this.runAction(workflowId, state, version, next, ulid, ctx, event)
      } catch (err) {
        if (err instanceof ConcurrencyError) { current = undefined; continue } // another process or event moved the workflow: read again
        throw err
      }
      await this.deps.afterAction?.(next.key)
    }
    throw new Error(`workflow ${workflowId}: too many rounds`)
  }

  /**
   * A task went on a route: the workflow is `scheduled` once every open task of it is on a route
   * (or assigned with a window). Each task's stream is read as it is now: of two tasks routed at
   * once, the handling of the later append sees both. MarkScheduled is a no-op past `new`, and a
   * lost race re-reads (the other writer may have scheduled it already).
   */
  private async schedule(workflowId: number, event: RecordedEvent, ctx: CommandContext): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const { state, version } = await this.load(workflowId)
      if (!state.exists || state.status !== 'new') return
      const facts = await Promise.all(state.tasks.map(async (t) => scheduleFacts(await this.platform.store.readStream(taskStream(t.ulid)))))
      if (!isScheduled(facts)) return
      const at = textOf(event.data, 'routed_at') ?? ctx.now.toISOString()
      try {
        await this.record(workflowId, state, version, markScheduled.decide({ type: 'MarkScheduled', data: { ...this.ids(state), scheduled_at: at } }, state), ctx)
        return
      } catch (err) {
        if (!(err instanceof ConcurrencyError)) throw err
      }
    }
  }

  private async load(workflowId: number): Promise<{ state: WorkflowState; version: number }> {
    const events = await this.platform.store.readStream(workflowStream(workflowId))
    return { state: fold(events), version: events.length }
  }

  private ids(state: WorkflowState) {
    return { workflow_id: state.created!.workflow_id, organization_id: state.created!.organization_id }
  }

  /**
   * Appends what a slice's decider made of its command on `state`, expecting `version`, with
   * `extra` streams in the same write. Returns the workflow after it, or undefined when it must be
   * read again (nothing decided, or the write found its events already stored).
   */
  private async record(
    workflowId: number, state: WorkflowState, version: number, decided: WorkflowEvent[], ctx: CommandContext, extra: DecidedAppend[] = [],
    opts: { /** The decision is a MarkInProgress itself. */ progress?: boolean } = {},
  ): Promise<Loaded | undefined> {
    // An outcome's start (see STARTS) goes with its first record, ahead of it.
    const p = this.progress.get(ctx)
    const progress = p && !opts.progress ? markInProgress.decide({ type: 'MarkInProgress', data: { ...this.ids(state), ...p } }, state) : []
    const events = [...progress, ...decided]
    if (!events.length) return undefined
    // Not waited for here: the next action need not wait for the read models (handle() waits once at the end).
    const results = await appendDecided(this.platform.commands, [
      { streamId: workflowStream(workflowId), events, expected: version === 0 ? 'no_stream' : version },
      ...extra,
    ], ctx, { wait: false })
    const result = results[0]!
    this.progress.delete(ctx)
    this.positions.set(ctx, result.position)
    if (!result.appended || result.nextVersion !== version + events.length) return undefined
    return { state: events.reduce(evolve, state), version: result.nextVersion }
  }

  private async settle(ctx: CommandContext): Promise<void> {
    await awaitReadModels(this.platform.commands, this.positions.get(ctx))
  }

  /** Runs one action and records it; returns the workflow after it (see record()), undefined to read it again. */
  private async runAction(workflowId: number, state: WorkflowState, version: number, p: PlannedAction, ulid: string, ctx: CommandContext, event: RecordedEvent): Promise<Loaded | undefined> {
    const ids = this.ids(state)
    const at = ctx.now.toISOString()
    const taken = (outcome: string) => this.record(workflowId, state, version, takeAction.decide({ type: 'TakeAction', data: { ...ids, action_key: p.key, do: p.action.do, outcome, at } }, state), ctx)
    const a = p.action
    switch (a.do) {
      case 'create_task':
      case 'retry': {
        const attempts = attemptsOf(state, p.step.key)
        if (a.do === 'retry' && attempts >= (a.max_attempts ?? 1)) return taken('retries spent')
        // The triggering event's time: the same on every redelivery, so the same id.
        const taskUlid = ulidFromKey(p.key, event.recordedAt)
        const task = stepTask(state.created!, p.step, taskUlid, latestTasksOf(state, p.step.depends_on ?? []), ctx.now)
        if (!task) return taken('skipped: the step\'s address is missing')
        return this.record(workflowId, state, version, recordTask.decide({
          type: 'RecordTask',
          data: { ...ids, ulid: taskUlid, step_key: p.step.key, attempt: attempts + 1, action_key: p.key, retry: a.do === 'retry', created_at: at },
        }, state), ctx, [newTask(task)])
      }
      case 'cancel_remaining_tasks':
        if (state.status === 'cancelled') return undefined
        await cancelTasks(this.platform, ids.organization_id, state.tasks.map((t) => t.ulid).filter((u) => u !== ulid), ctx, 'cancelled by the workflow')
        return taken('done')
      case 'emit_event':
        return this.record(workflowId, state, version, emitEvent.decide({ type: 'EmitEvent', data: { ...ids, action_key: p.key, event: a.event, at } }, state), ctx)
      case 'start_workflow': {
        const id = await startWorkflow(this.platform, ids.organization_id, { blueprint_key: a.blueprint_key, data: state.created!.data }, ctx, { startedBy: p.key })
        return taken(`started workflow ${id}`)
      }
      case 'set_shipment_status': {
        const shipmentId = state.created!.shipment_id
        if (shipmentId === null) return taken('skipped: no shipment')
        if (!this.deps.shipments) {
          this.logger.warn({ workflow_id: workflowId, action_key: p.key }, 'set_shipment_status: no shipment status port wired in; skipped')
          return taken('skipped: shipment statuses not connected')
        }
        // A failure's reason is the substatus when the blueprint names none (and the catalog has it).
        const note = await this.deps.shipments.setShipmentStatusFromRoutes(this.platform, shipmentId, a.status, a.substatus ?? null, ctx, {
          key: p.key, signed_by: textOf(event.data, 'signed_by') ?? null, reason: textOf(event.data, 'reason') ?? null, occurred_at: outcomeAt(event) ?? null,
        })
        return taken(note)
      }
      case 'complete_workflow':
        return this.record(workflowId, state, version, completeWorkflow.decide({ type: 'CompleteWorkflow', data: { ...ids, action_key: p.key, completed_at: at } }, state), ctx)
      case 'fail_workflow':
        return this.record(workflowId, state, version, failWorkflow.decide({ type: 'FailWorkflow', data: { ...ids, action_key: p.key, failed_at: at } }, state), ctx)
      default:
        return undefined
    }
  }

  /** The action that kept failing, recorded on the workflow (its `errors`), once. */
  private async park(workflowId: number, ulid: string, event: RecordedEvent, err: unknown, attempts: number, ctx: CommandContext): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const { state, version } = await this.load(workflowId)
      if (!state.exists) return
      const outcome = OUTCOMES[event.type]
      const blueprint = state.created!.blueprint
      const v = outcome ? await this.blueprintVersion(blueprint.id, blueprint.version) : undefined
      const [next] = v && outcome ? pendingActions(state, v.steps ?? [], ulid, outcome) : []
      const key = next?.key ?? `workflow:${workflowId}:event:${event.id}`
      const error = errorText(err)
      try {
        await this.record(workflowId, state, version, parkAction.decide({ type: 'ParkAction', data: { ...this.ids(state), action_key: key, error, attempts, at: ctx.now.toISOString() } }, state), ctx)
        await this.settle(ctx)
        return
      } catch (e) {
        if (!(e instanceof ConcurrencyError)) throw e
      }
    }
  }
}
