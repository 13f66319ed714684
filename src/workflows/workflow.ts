import {
  WorkflowEvents, type WorkflowActionParked, type WorkflowActionTaken, type WorkflowCompleted, type WorkflowCreated, type WorkflowEventEmitted,
  type WorkflowFailed, type WorkflowProgressed, type WorkflowScheduled, type WorkflowTaskCreated,
} from '../../schemas/events/workflows.js'
import { isEventOf, type EventOf } from '../../schemas/events/event-map.js'
import type { WorkflowStatus } from '../../schemas/api/workflows.js'
import type { Action, Step } from '../../schemas/api/blueprints.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import { stream } from '../../schemas/events/streams.js'

/** The workflow aggregate (DESIGN §3.9): one run of a blueprint version; stream `workflow-<id>`. */
export type WorkflowEvent = EventOf<typeof WorkflowEvents>

export const FINAL_WORKFLOW_STATUSES: readonly WorkflowStatus[] = ['completed', 'failed', 'cancelled']

export interface WorkflowTaskRef { ulid: string; step_key: string; attempt: number }

export interface WorkflowState {
  exists: boolean
  created: WorkflowCreated | null
  status: WorkflowStatus | null
  /** Every task the workflow made, in order. */
  tasks: WorkflowTaskRef[]
  /** Action keys already spent → whether the rest of their list was skipped (a retry that made its task). */
  done: Map<string, { stop: boolean }>
  /** Action keys parked in the dead letters. */
  parked: Set<string>
}

export const workflowStream = stream.workflow

export const initialState = (): WorkflowState => ({ exists: false, created: null, status: null, tasks: [], done: new Map(), parked: new Set() })

/** The idempotency key of an action (DESIGN §3.9): one run however often its event is delivered. */
export const actionKey = (workflowId: number, stepKey: string, attempt: number, index: number): string =>
  `workflow:${workflowId}:step:${stepKey}:attempt:${attempt}:action:${index}`

const withDone = (state: WorkflowState, key: string, stop: boolean): Map<string, { stop: boolean }> => new Map(state.done).set(key, { stop })

export function evolve(state: WorkflowState, event: WorkflowEvent): WorkflowState {
  switch (event.type) {
    case 'WorkflowCreated': return { ...state, exists: true, created: event.data, status: 'new' }
    case 'WorkflowTaskCreated': {
      const d = event.data
      const tasks = [...state.tasks, { ulid: d.ulid, step_key: d.step_key, attempt: d.attempt }]
      return { ...state, tasks, done: d.action_key === null ? state.done : withDone(state, d.action_key, d.retry) }
    }
    case 'WorkflowActionTaken': return { ...state, done: withDone(state, event.data.action_key, false) }
    case 'WorkflowEventEmitted': return { ...state, done: withDone(state, event.data.action_key, false) }
    case 'WorkflowScheduled': return { ...state, status: 'scheduled' }
    case 'WorkflowProgressed': return { ...state, status: 'in_progress' }
    case 'WorkflowCompleted': return { ...state, status: 'completed', done: withDone(state, event.data.action_key, false) }
    case 'WorkflowFailed': return { ...state, status: 'failed', done: withDone(state, event.data.action_key, false) }
    case 'WorkflowCancelled': return { ...state, status: 'cancelled' }
    case 'WorkflowActionParked': return { ...state, parked: new Set(state.parked).add(event.data.action_key) }
    default: return state
  }
}

export const isFinal = (state: WorkflowState): boolean => state.status !== null && FINAL_WORKFLOW_STATUSES.includes(state.status)

/** A command on an existing workflow of the caller's organization (another tenant's is unknown). */
export function requireWorkflow(state: WorkflowState, organizationId: string): WorkflowCreated {
  if (!state.exists || state.created!.organization_id !== organizationId) throw new NotFoundError('Workflow')
  return state.created!
}

/** completed, failed and cancelled never change again (409). */
export function requireOpen(state: WorkflowState): void {
  if (isFinal(state)) throw new IllegalStateError(`The workflow is ${state.status}; a final workflow cannot change.`, 'workflow_final')
}

/** How many tasks the step has had: the attempt number of its latest task (0 when none). */
export const attemptsOf = (state: WorkflowState, stepKey: string): number =>
  state.tasks.reduce((n, t) => (t.step_key === stepKey ? Math.max(n, t.attempt) : n), 0)

/** The latest task of each of these steps (what a new task of a step depending on them waits for). */
export const latestTasksOf = (state: WorkflowState, stepKeys: readonly string[]): string[] =>
  stepKeys.flatMap((k) => {
    const last = [...state.tasks].reverse().find((t) => t.step_key === k)
    return last ? [last.ulid] : []
  })

/** One action to run now, with its key, and the step whose task it makes (create_task, retry). */
export interface PlannedAction { key: string; index: number; action: Action; step: Step }

/**
 * The actions a task's outcome sets off, not yet spent, in order (pure: what the process manager
 * runs). Nothing when the workflow is final (nothing runs after cancel), and nothing after an
 * action that stopped the list (a retry that made its task). The manager runs the first, records
 * it, and asks again: a crash in between resumes at the next one and repeats none.
 */
export function pendingActions(state: WorkflowState, steps: readonly Step[], taskUlid: string, outcome: 'complete' | 'failed'): PlannedAction[] {
  if (!state.exists || isFinal(state)) return []
  const task = state.tasks.find((t) => t.ulid === taskUlid)
  if (!task) return []
  const step = steps.find((s) => s.key === task.step_key)
  if (!step) return []
  const actions = (outcome === 'complete' ? step.on_complete : step.on_fail) ?? []
  const out: PlannedAction[] = []
  for (let i = 0; i < actions.length; i++) {
    const key = actionKey(state.created!.workflow_id, task.step_key, task.attempt, i)
    const spent = state.done.get(key)
    if (spent?.stop) return []
    if (spent) continue
    const action = actions[i]!
    const target = action.do === 'create_task' ? steps.find((s) => s.key === action.step) : step
    if (!target) continue // publication refuses unknown steps; an old version is passed over, not crashed on
    out.push({ key, index: i, action, step: target })
  }
  return out
}

/**
 * An action's record (the slices of the process manager's commands): refused after a final state,
 * nothing when its key is spent already.
 */
export function recordOnce(state: WorkflowState, key: string, event: WorkflowEvent): WorkflowEvent[] {
  if (state.done.has(key)) return []
  requireOpen(state)
  return [event]
}

/** A slice's decider: its decide with the workflow's evolve and initial state. */
export const workflowDeciderOf = <C>(decide: (command: C, state: WorkflowState) => WorkflowEvent[]): Decider<WorkflowState, C, WorkflowEvent> =>
  ({ decide, evolve, initialState })

/** The state of a stream's events (what the process manager folds before acting). */
export const fold = (events: ReadonlyArray<{ type: string; data: unknown }>): WorkflowState =>
  events.reduce((s, e) => (isEventOf(WorkflowEvents, e) ? evolve(s, e) : s), initialState())
