import type { BusLogger, Bus, ConsumerOptions } from '../infrastructure/bus/bus.js'
import type { Platform } from '../platform.js'
import type { CommandContext } from '../shared/command-handler.js'
import { ValidationError } from '../shared/errors.js'
import type { Step } from '../../schemas/api/blueprints.js'
import type { TaskCreated } from '../../schemas/events/tasks.js'
import { BlueprintEvents } from '../../schemas/events/blueprints.js'
import { WorkflowEvents, type WorkflowActionParked, type WorkflowActionTaken, type WorkflowProgressed } from '../../schemas/events/workflows.js'
import { isEventOf, pick, type EventOf } from '../../schemas/events/event-map.js'
import { stream } from '../../schemas/events/streams.js'
import {
  attemptsOf, evolve as evolveWorkflow, initialState as initialWorkflow, latestTasksOf, pendingActions,
  type PlannedAction, type WorkflowEvent, type WorkflowState,
} from '../workflows/workflow.js'
import { decider as recordTask, type RecordTask } from '../workflows/record-task.js'
import { decider as takeAction, type TakeAction } from '../workflows/take-action.js'
import { decider as emitEvent, type EmitEvent } from '../workflows/emit-event.js'
import { decider as completeWorkflow, type CompleteWorkflow } from '../workflows/complete-workflow.js'
import { decider as failWorkflow, type FailWorkflow } from '../workflows/fail-workflow.js'
import { decider as markInProgress, type MarkInProgress } from '../workflows/mark-in-progress.js'
import { decider as markScheduled, type MarkScheduled } from '../workflows/mark-scheduled.js'
import { decider as parkAction, type ParkAction } from '../workflows/park-action.js'
import { actionTask } from '../workflows/workflow-tasks.js'
import { evolveScheduleFacts, isScheduled, noScheduleFacts, ScheduleEvents, type ScheduleFacts } from '../workflows/schedule.js'
import { startWorkflow } from '../workflows/start-workflow.js'
import { cancelTasks } from '../workflows/cancel-workflow.js'
import { recordStepTask, runWorkflowCommand } from '../workflows/workflow-command.js'
import { eventsOf, subjectsOf } from '../shared/event-subjects.js'
import {
  ignore, relayedEvents, send, type CommandHandler, type Reaction, type ReactionFailure, type ReactionInput, type ReactionOutput,
  type StoredEvent, type StreamRead,
} from './reaction.js'
import { ReactionRunner } from './reaction-runner.js'

export const WORKFLOW_MANAGER_CONSUMER = 'workflow-manager'
/** A task's work starting (the workflow goes in_progress), its outcomes (a step's actions), and its routing (scheduled). */
const STARTS = eventsOf('task', 'TaskStarted', 'TaskArrived')
const OUTCOMES = eventsOf('task', 'TaskCompleted', 'TaskFailed')
const ROUTED = eventsOf('task', 'TaskRouted')
const INPUTS = { ...STARTS, ...OUTCOMES, ...ROUTED }
export const WORKFLOW_MANAGER_SUBJECTS = subjectsOf('task', INPUTS)

/** A task event the manager decides on, with its stored time (a step's next task's id derives from it). */
export type WorkflowManagerInput = StoredEvent<typeof INPUTS>

/** What its load step reads: a task's stream (its workflow; what `scheduled` needs), the workflow's, the blueprint's. */
const HISTORY = { ...ScheduleEvents, ...WorkflowEvents, ...pick(BlueprintEvents, 'BlueprintCreated', 'BlueprintDrafted') }

export interface WorkflowManagerState {
  /** The tasks whose streams were read: their workflow (null: none), and what `scheduled` needs of them. */
  tasks: Readonly<Record<string, { workflowId: number | null; facts: ScheduleFacts }>>
  workflow: WorkflowState
  /** The steps of each version of the workflow's blueprint (a published version never changes). */
  steps: Readonly<Record<number, Step[]>>
}

type Ids = { workflow_id: number; organization_id: string }
type Action<Do extends string, Extra> = { workflow_id: number; organization_id: string; action_key: string; do: Do; at: string } & Extra

/**
 * An action's command, with the start its outcome stands for when that is not recorded yet: the
 * first record of a step carries it, in the same append (one write per step).
 */
type Recording<C> = C & { progress?: WorkflowProgressed }

/** The commands it sends: each recorded through its workflows slice; the effects first run through their own modules. */
export type WorkflowManagerCommand =
  | MarkInProgress | MarkScheduled
  | Recording<EmitEvent> | Recording<CompleteWorkflow> | Recording<FailWorkflow> | Recording<ParkAction>
  /** An action passed over, or a retry whose attempts are spent: its key recorded with the outcome. */
  | Recording<TakeAction>
  /** create_task, retry: the task (its TaskCreated) and its record, in one write. */
  | Recording<{ type: 'RecordStepTask'; data: { record: RecordTask['data']; task: TaskCreated } }>
  | Recording<{ type: 'CancelRemainingTasks'; data: Action<'cancel_remaining_tasks', { task_ulids: string[] }> }>
  | Recording<{ type: 'StartWorkflow'; data: Action<'start_workflow', { blueprint_key: string; data: Record<string, unknown> }> }>
  | Recording<{
    type: 'SetShipmentStatus'
    data: Action<'set_shipment_status', {
      shipment_id: number; status: string; substatus: string | null
      /** From the task's outcome: who signed a delivery, why it failed, when. */
      signed_by: string | null; reason: string | null; occurred_at: string
    }>
  }>

const isSkipped = (e: WorkflowManagerInput): boolean => isEventOf(STARTS, e) && e.data.skipped === true

/**
 * The task's workflow: named by the step itself, else by its TaskCreated once read. Null: none;
 * undefined: not known before its stream is read (steps written before steps named it, TaskRouted).
 */
function workflowOf(e: WorkflowManagerInput, state: WorkflowManagerState): number | null | undefined {
  if (!isEventOf(ROUTED, e) && e.data.workflow_id !== undefined) return e.data.workflow_id
  return state.tasks[e.data.ulid]?.workflowId
}

/** The workflow's stream when the step names it, else the task's (its TaskCreated names it). A skipped start reads nothing. */
function load(e: WorkflowManagerInput): StreamRead | null {
  if (isSkipped(e)) return null
  const named = isEventOf(ROUTED, e) ? undefined : e.data.workflow_id
  if (named === null) return null
  return { stream: named === undefined ? stream.task(e.data.ulid) : stream.workflow(named) }
}

/** Then the workflow's; for an outcome its blueprint's (the steps); for a routing every task's (are they all scheduled?). */
function loadNext(e: WorkflowManagerInput, state: WorkflowManagerState): StreamRead[] {
  const workflowId = isSkipped(e) ? null : workflowOf(e, state)
  if (workflowId === null || workflowId === undefined) return []
  const reads = [{ stream: stream.workflow(workflowId) }]
  const wf = state.workflow
  if (!wf.exists) return reads
  if (isEventOf(OUTCOMES, e)) reads.push({ stream: stream.blueprint(wf.created!.blueprint.id) })
  if (isEventOf(ROUTED, e) && wf.status === 'new') reads.push(...wf.tasks.map((t) => ({ stream: stream.task(t.ulid) })))
  return reads
}

function evolve(state: WorkflowManagerState, e: EventOf<typeof HISTORY>): WorkflowManagerState {
  if (isEventOf(ScheduleEvents, e)) {
    const ulid = e.data.ulid
    const task = state.tasks[ulid] ?? { workflowId: null, facts: noScheduleFacts() }
    const workflowId = e.type === 'TaskCreated' ? e.data.workflow_id : task.workflowId
    return { ...state, tasks: { ...state.tasks, [ulid]: { workflowId, facts: evolveScheduleFacts(task.facts, e) } } }
  }
  if (isEventOf(WorkflowEvents, e)) return { ...state, workflow: evolveWorkflow(state.workflow, e) }
  // The last content drafted under a version is the one published: versions are frozen once published.
  return { ...state, steps: { ...state.steps, [e.data.version]: e.data.steps } }
}

const initialState = (): WorkflowManagerState => ({ tasks: {}, workflow: initialWorkflow(), steps: {} })

const idsOf = (wf: WorkflowState): Ids => ({ workflow_id: wf.created!.workflow_id, organization_id: wf.created!.organization_id })

/** The event a command records when its key is not spent yet: how the decision sees the workflow move on. */
function recorded(command: WorkflowManagerCommand): WorkflowEvent {
  switch (command.type) {
    case 'MarkInProgress': return { type: 'WorkflowProgressed', data: command.data }
    case 'MarkScheduled': return { type: 'WorkflowScheduled', data: command.data }
    case 'EmitEvent': return { type: 'WorkflowEventEmitted', data: command.data }
    case 'CompleteWorkflow': return { type: 'WorkflowCompleted', data: command.data }
    case 'FailWorkflow': return { type: 'WorkflowFailed', data: command.data }
    case 'ParkAction': return { type: 'WorkflowActionParked', data: command.data }
    case 'TakeAction': return { type: 'WorkflowActionTaken', data: command.data }
    case 'RecordStepTask': return { type: 'WorkflowTaskCreated', data: command.data.record }
    default: {
      const { workflow_id, organization_id, action_key, do: action, at } = command.data
      return { type: 'WorkflowActionTaken', data: { workflow_id, organization_id, action_key, do: action, outcome: 'done', at } }
    }
  }
}

/** The command of a step's action. */
type ActionCommand = Exclude<WorkflowManagerCommand, MarkInProgress | MarkScheduled | ParkAction>

/** The command that runs a planned action on the workflow as the decision sees it. */
function commandOf(p: PlannedAction, wf: WorkflowState, e: StoredEvent<typeof OUTCOMES>, now: Date): ActionCommand {
  const ids = idsOf(wf)
  const at = now.toISOString()
  const base = { ...ids, action_key: p.key, at }
  const taken = (outcome: string): ActionCommand => ({ type: 'TakeAction', data: { ...base, do: p.action.do, outcome } })
  const a = p.action
  switch (a.do) {
    case 'create_task':
    case 'retry': {
      const attempts = attemptsOf(wf, p.step.key)
      if (a.do === 'retry' && attempts >= (a.max_attempts ?? 1)) return taken('retries spent')
      // Its id from the key and the triggering event's stored time: the same on every redelivery.
      const task = actionTask(wf.created!, p.step, p.key, e.recordedAt, latestTasksOf(wf, p.step.depends_on ?? []), now)
      if (!task) return taken('skipped: the step\'s address is missing')
      const ulid = task.ulid
      return {
        type: 'RecordStepTask',
        data: { record: { ...ids, ulid, step_key: p.step.key, attempt: attempts + 1, action_key: p.key, retry: a.do === 'retry', created_at: at }, task },
      }
    }
    case 'cancel_remaining_tasks':
      return { type: 'CancelRemainingTasks', data: { ...base, do: a.do, task_ulids: wf.tasks.map((t) => t.ulid).filter((u) => u !== e.data.ulid) } }
    case 'emit_event':
      return { type: 'EmitEvent', data: { ...ids, action_key: p.key, event: a.event, at } }
    case 'start_workflow':
      return { type: 'StartWorkflow', data: { ...base, do: a.do, blueprint_key: a.blueprint_key, data: wf.created!.data } }
    case 'set_shipment_status': {
      const shipmentId = wf.created!.shipment_id
      if (shipmentId === null) return taken('skipped: no shipment')
      const outcome = e.type === 'TaskCompleted'
        ? { signed_by: e.data.signed_by, reason: null, occurred_at: e.data.completed_at }
        : { signed_by: e.data.signed_by, reason: e.data.reason, occurred_at: e.data.failed_at }
      return { type: 'SetShipmentStatus', data: { ...base, do: a.do, shipment_id: shipmentId, status: a.status, substatus: a.substatus ?? null, ...outcome } }
    }
    case 'complete_workflow':
      return { type: 'CompleteWorkflow', data: { ...ids, action_key: p.key, completed_at: at } }
    case 'fail_workflow':
      return { type: 'FailWorkflow', data: { ...ids, action_key: p.key, failed_at: at } }
  }
}

function decide({ message: e, now }: ReactionInput<WorkflowManagerInput>, state: WorkflowManagerState): ReactionOutput<WorkflowManagerCommand>[] {
  // A step a command skipped comes with the event that skipped it (an arrival, an outcome), which moves the workflow on.
  if (isSkipped(e)) return [ignore('a skipped step: the event it came with moves the workflow')]
  const workflowId = workflowOf(e, state)
  if (workflowId === null || workflowId === undefined) return [ignore('not a task of a workflow')]
  let wf = state.workflow
  if (!wf.exists) return [ignore('the workflow is not recorded')]
  const ids = idsOf(wf)

  if (isEventOf(ROUTED, e)) {
    // DESIGN §3.9: scheduled once every open task is on a route (or assigned with a window).
    if (wf.status !== 'new') return [ignore(`the workflow is ${wf.status}`)]
    if (!isScheduled(wf.tasks.map((t) => state.tasks[t.ulid]?.facts ?? noScheduleFacts()))) return [ignore('a task of it is not scheduled yet')]
    return [send({ type: 'MarkScheduled', data: { ...ids, scheduled_at: e.data.routed_at } })]
  }

  const outputs: ReactionOutput<WorkflowManagerCommand>[] = []
  /** Sends a command its slice would record on `wf`, and moves `wf` on by it. */
  const sendOn = (command: WorkflowManagerCommand, events: WorkflowEvent[]) => {
    if (!events.length) return
    outputs.push(send(command))
    wf = events.reduce(evolveWorkflow, wf)
  }
  const progress = (at: string): MarkInProgress => ({ type: 'MarkInProgress', data: { ...ids, task_ulid: e.data.ulid, started_at: at } })

  if (isEventOf(STARTS, e)) {
    const command = progress(e.type === 'TaskStarted' ? e.data.started_at : e.data.arrived_at)
    sendOn(command, markInProgress.decide(command, wf))
    return outputs.length ? outputs : [ignore(`the workflow is ${wf.status}: only forward`)]
  }

  // An outcome: the step's actions in order, as the workflow moves on by each (a retry that made
  // its task, or an end, stops the list); the first carries the start the outcome stands for.
  const outcome = e.type === 'TaskCompleted' ? 'complete' : 'failed'
  const started = progress(e.type === 'TaskCompleted' ? e.data.completed_at : e.data.failed_at)
  const startedNow = markInProgress.decide(started, wf)
  wf = startedNow.reduce(evolveWorkflow, wf)
  const steps = state.steps[wf.created!.blueprint.version]
  for (let round = 0; steps && round < 100; round++) {
    const [next] = pendingActions(wf, steps, e.data.ulid, outcome)
    if (!next) break
    const command = commandOf(next, wf, e, now)
    sendOn(startedNow.length && !outputs.length ? { ...command, progress: started.data } : command, [recorded(command)])
  }
  if (outputs.length) return outputs
  if (startedNow.length) return [send(started)]
  return [ignore(steps ? 'nothing left to run' : 'the blueprint version is not in its stream')]
}

/** What a workflow shows of a failure: a refused command's field errors too (e.g. a start_workflow's missing data). */
const errorText = (err: unknown): string =>
  err instanceof ValidationError ? `${err.message} ${Object.entries(err.errors).map(([k, v]) => `${k}: ${(v ?? []).join(' ')}`).join('; ')}`
    : err instanceof Error ? err.message : String(err)

const actionKeyOf = (command: WorkflowManagerCommand | null): string | undefined =>
  command && 'action_key' in command.data ? command.data.action_key
    : command?.type === 'RecordStepTask' ? command.data.record.action_key : undefined

/** The action that kept failing, recorded on the workflow (its `errors`), once. */
function giveUp(
  { message: e, now }: ReactionInput<WorkflowManagerInput>, state: WorkflowManagerState, failure: ReactionFailure<WorkflowManagerCommand>,
): ReactionOutput<WorkflowManagerCommand>[] {
  if (!state.workflow.exists) return []
  const data: WorkflowActionParked = {
    ...idsOf(state.workflow), action_key: actionKeyOf(failure.command) ?? `workflow:${state.workflow.created!.workflow_id}:event:${e.id}`,
    error: errorText(failure.error), attempts: failure.attempts, at: now.toISOString(),
  }
  // The outcome's start goes with the park when the failing action carried it (it was not recorded).
  const progress = failure.command && 'progress' in failure.command ? failure.command.progress : undefined
  return [send({ type: 'ParkAction', data, ...(progress ? { progress } : {}) })]
}

/** The pure part, for its given/when/then specs. */
export const decider = { decide, evolve, initialState }

/**
 * The port through which `set_shipment_status` changes a shipment (DESIGN §3.9: through the
 * shipment's own decider, `source: "routes"`), shipment-ports.ts; without one the action is
 * recorded as skipped and logged.
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
  /** Handlings at once in this process (across workflows; one workflow's take turns). Default 64. */
  concurrency?: number
  /** Tests: called after each action is recorded (a throw here is a crash between two actions). */
  afterAction?: (key: string) => void | Promise<void>
}

type Handlers = { [T in WorkflowManagerCommand['type']]: CommandHandler<Extract<WorkflowManagerCommand, { type: T }>> }

/** How each command runs: the effect through its module (idempotent by itself), then its record through its workflows slice. */
function handlersOf(deps: Pick<WorkflowManagerDeps, 'shipments' | 'afterAction'>): Handlers {
  type Taken = Pick<WorkflowActionTaken, 'workflow_id' | 'organization_id' | 'action_key' | 'do' | 'at'>
  const taken = async (platform: Platform, data: Taken, outcome: string, ctx: CommandContext, progress: WorkflowProgressed | undefined) => {
    await runWorkflowCommand(platform, data.workflow_id, takeAction, { type: 'TakeAction', data: { ...data, outcome } }, ctx, progress)
    await deps.afterAction?.(data.action_key)
  }
  return {
    async MarkInProgress(platform, command, ctx) { await runWorkflowCommand(platform, command.data.workflow_id, markInProgress, command, ctx) },
    async MarkScheduled(platform, command, ctx) { await runWorkflowCommand(platform, command.data.workflow_id, markScheduled, command, ctx) },
    async ParkAction(platform, { progress, ...command }, ctx) { await runWorkflowCommand(platform, command.data.workflow_id, parkAction, command, ctx, progress) },
    async TakeAction(platform, { data, progress }, ctx) { await taken(platform, data, data.outcome, ctx, progress) },
    async EmitEvent(platform, { progress, ...command }, ctx) {
      await runWorkflowCommand(platform, command.data.workflow_id, emitEvent, command, ctx, progress)
      await deps.afterAction?.(command.data.action_key)
    },
    async CompleteWorkflow(platform, { progress, ...command }, ctx) {
      await runWorkflowCommand(platform, command.data.workflow_id, completeWorkflow, command, ctx, progress)
      await deps.afterAction?.(command.data.action_key)
    },
    async FailWorkflow(platform, { progress, ...command }, ctx) {
      await runWorkflowCommand(platform, command.data.workflow_id, failWorkflow, command, ctx, progress)
      await deps.afterAction?.(command.data.action_key)
    },
    async RecordStepTask(platform, { data, progress }, ctx) {
      await recordStepTask(platform, { type: 'RecordTask', data: data.record }, data.task, ctx, progress)
      await deps.afterAction?.(data.record.action_key)
    },
    async CancelRemainingTasks(platform, { data: { task_ulids, ...data }, progress }, ctx) {
      await cancelTasks(platform, data.organization_id, task_ulids, ctx, 'cancelled by the workflow')
      await taken(platform, data, 'done', ctx, progress)
    },
    async StartWorkflow(platform, { data: { blueprint_key, data: given, ...data }, progress }, ctx) {
      // The action's key reserves the start in the started workflow's own write: a repeat starts none.
      const id = await startWorkflow(platform, data.organization_id, { blueprint_key, data: given }, ctx, { startedBy: data.action_key })
      await taken(platform, data, `started workflow ${id}`, ctx, progress)
    },
    async SetShipmentStatus(platform, { data: { shipment_id, status, substatus, signed_by, reason, occurred_at, ...data }, progress }, ctx, logger) {
      if (!deps.shipments) {
        logger.warn({ workflow_id: data.workflow_id, action_key: data.action_key }, 'set_shipment_status: no shipment status port wired in; skipped')
        return taken(platform, data, 'skipped: shipment statuses not connected', ctx, progress)
      }
      // A failure's reason is the substatus when the blueprint names none (and the catalog has it).
      const note = await deps.shipments.setShipmentStatusFromRoutes(platform, shipment_id, status, substatus, ctx, {
        key: data.action_key, signed_by, reason, occurred_at,
      })
      await taken(platform, data, note, ctx, progress)
    },
  }
}

/**
 * The process manager of workflows (DESIGN §3.9), declared: for a task of a workflow it reads the
 * workflow's stream and its blueprint's (the version the workflow started with), and decides the
 * step's actions in order, each under its idempotency key `workflow:<id>:step:<key>:attempt:<n>:action:<i>`,
 * each recorded through its workflows slice, which reads the stream and appends expecting its version:
 * - a redelivered event finds its keys spent and records nothing;
 * - a crash between two actions resumes at the first unspent key and repeats none;
 * - two processes racing on one workflow: one append wins, the other re-reads and finds the key spent;
 * - a task-making action appends its TaskCreated and its record in ONE atomic write, the task's
 *   ulid derived from the key: there is no window in which a task exists unrecorded;
 * - a cancel (or any final state) makes the slices refuse every later record: nothing runs after it.
 * Effects outside the workflow (cancelling tasks, another workflow, a shipment status) run before
 * their record and are idempotent by themselves. A failing action is retried with the bus's
 * delays, then recorded as parked (on the workflow's `errors`) and dead-lettered (in /metrics).
 */
export function workflowManager(deps: Omit<WorkflowManagerDeps, 'bus' | 'logger'> = {}): Reaction<WorkflowManagerInput, WorkflowManagerState, typeof HISTORY, WorkflowManagerCommand> {
  const options: ConsumerOptions = {
    name: WORKFLOW_MANAGER_CONSUMER,
    subjects: WORKFLOW_MANAGER_SUBJECTS,
    maxDeliveries: deps.maxDeliveries ?? 6,
    retryDelaysMs: deps.retryDelaysMs ?? [200, 1_000, 5_000, 30_000, 120_000],
    // A handling mostly waits (the database, then the read models): more at once than the bus's
    // default keeps a burst of completions from queueing behind those waits.
    concurrency: deps.concurrency ?? 64,
  }
  return { options, source: relayedEvents(INPUTS), history: HISTORY, load, loadNext, giveUp, ...decider, handlers: handlersOf(deps) }
}

/** The reaction run with its ports, as carrier-processes.ts and the tests start it. */
export class WorkflowManager extends ReactionRunner<WorkflowManagerInput, WorkflowManagerState, typeof HISTORY, WorkflowManagerCommand> {
  constructor(platform: Platform, deps: WorkflowManagerDeps) {
    super(platform, deps.bus, workflowManager(deps), deps.logger)
  }
}
