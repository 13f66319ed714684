import { requireOwned } from '../shared/ownership.js'
import { TaskEvents, type Requirement, type Requirements } from '../../schemas/events/tasks.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import type { TaskStatus } from '../../schemas/api/tasks.js'
import type { TaskRouteMarkers } from '../../schemas/events/routes.js'
import type { Decider } from '../shared/decider.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { stream } from '../../schemas/events/streams.js'

/** The task aggregate (DESIGN §3.9): one executable unit of work; stream `task-<ulid>`. */
export type TaskEvent = EventOf<typeof TaskEvents>

/** Markers the routes module writes in a task's stream (route-command.ts): which route it is on. */
export type RouteMarker = EventOf<typeof TaskRouteMarkers>

export interface TaskState {
  exists: boolean
  ulid: string | null
  organizationId: string | null
  status: TaskStatus | null
  requirements: Requirements
  /** Attachments already added: id → content type (a photo requirement looks for an image). */
  attachments: Map<string, string>
  /** The route it is on (its stream's last routing marker); null when on none. */
  routeId: number | null
  /** The workflow that made it; null when none did. */
  workflowId: number | null
}

export const FINAL_STATUSES: readonly TaskStatus[] = ['complete', 'failed', 'cancelled']

export const taskStream = stream.task

export const initialState = (): TaskState =>
  ({ exists: false, ulid: null, organizationId: null, status: null, requirements: { complete: [], fail: [] }, attachments: new Map(), routeId: null, workflowId: null })

export function evolve(state: TaskState, event: TaskEvent | RouteMarker): TaskState {
  switch (event.type) {
    case 'TaskRouted': return { ...state, routeId: event.data.route_id }
    case 'TaskUnrouted': return { ...state, routeId: null }
    case 'TaskCreated':
      return {
        ...state, exists: true, ulid: event.data.ulid, organizationId: event.data.organization_id, status: 'pending',
        requirements: event.data.requirements, workflowId: event.data.workflow_id,
      }
    case 'TaskStarted': return { ...state, status: 'started' }
    case 'TaskArrived': return { ...state, status: 'arrived' }
    case 'TaskCompleted': return { ...state, status: 'complete' }
    case 'TaskFailed': return { ...state, status: 'failed' }
    case 'TaskCancelled': return { ...state, status: 'cancelled' }
    case 'TaskAttachmentAdded': {
      const attachments = new Map(state.attachments)
      attachments.set(event.data.id, event.data.content_type)
      return { ...state, attachments }
    }
    default:
      return state
  }
}

/** What every step of a task carries: the task, its organization, the route it is on and its workflow. */
export interface StepIds { ulid: string; organization_id: string; route_id: number | null; workflow_id: number | null }

/** A command on an existing task of the caller's organization (another tenant's task is unknown). */
export function requireTask(state: TaskState, organizationId: string): StepIds {
  requireOwned(state, organizationId, 'Task')
  return { ulid: state.ulid!, organization_id: state.organizationId, route_id: state.routeId, workflow_id: state.workflowId }
}

/** complete, failed and cancelled never change again. */
export function requireOpen(state: TaskState): void {
  if (state.status && FINAL_STATUSES.includes(state.status)) {
    throw new IllegalStateError(`The task is ${state.status}; a final task cannot change.`, 'task_final')
  }
}

/** Starting (also a start recorded as skipped) needs every dependency complete. */
export function requireDependenciesDone(pending: readonly string[]): void {
  if (pending.length) {
    throw new IllegalStateError(`The task depends on tasks that are not complete: ${pending.join(', ')}.`, 'dependencies_pending')
  }
}

/**
 * The steps a transition to `target` records before its own event: the ones the task has not taken
 * yet, marked `skipped`, at the same time (DESIGN §3.9: pending|started → complete|failed).
 */
export function skippedSteps(state: TaskState, ids: StepIds, at: string, target: 'arrived' | 'final'): TaskEvent[] {
  const out: TaskEvent[] = []
  if (state.status === 'pending') out.push({ type: 'TaskStarted', data: { ...ids, started_at: at, skipped: true } })
  if (target === 'final' && (state.status === 'pending' || state.status === 'started')) {
    out.push({ type: 'TaskArrived', data: { ...ids, arrived_at: at, skipped: true } })
  }
  return out
}

/** What a complete or a fail brings as proof, checked against the task's requirements. */
export interface Proof {
  signed_by: string | null
  notes: string | null
  barcode: string | null
  attachment_ids: string[]
  /** Package label codes of the linked shipment (a barcode must be one of them). */
  label_codes: string[]
}

/** Every missing or wrong proof, by the request field that should carry it (one 422). */
export function checkProof(state: TaskState, proof: Proof, required: readonly Requirement[]): void {
  const errors = new ErrorBag()
  if (required.includes('signature') && !proof.signed_by) errors.add('signed_by', 'This task requires the signer\'s name (signed_by).')
  if (required.includes('notes') && !proof.notes) errors.add('notes', 'This task requires notes.')
  proof.attachment_ids.forEach((id, i) => {
    if (!state.attachments.has(id)) errors.add(`attachment_ids.${i}`, 'The selected attachment id is not an attachment of this task.')
  })
  if (required.includes('photo')) {
    const images = [...state.attachments.values()].filter((type) => type.startsWith('image/'))
    if (images.length === 0) errors.add('attachment_ids', 'This task requires a photo: upload an image attachment first.')
  }
  if (proof.barcode !== null) {
    if (!proof.label_codes.includes(proof.barcode)) errors.add('barcode', 'The barcode does not match a package label code of the task\'s shipment.')
  } else if (required.includes('barcode_scan')) {
    errors.add('barcode', 'This task requires a barcode scan of a package of its shipment.')
  }
  errors.throwIfAny()
}

/**
 * The shared rule of complete and fail: any open state, dependencies done when taken straight from
 * pending, the proof `required` asks for; the steps not taken are recorded as skipped before `final`.
 */
export function closeTask(
  state: TaskState, d: Proof & { organization_id: string; pending_dependencies: string[]; now: Date },
  required: readonly Requirement[], final: (ids: StepIds, at: string) => TaskEvent,
): TaskEvent[] {
  const ids = requireTask(state, d.organization_id)
  requireOpen(state)
  if (state.status === 'pending') requireDependenciesDone(d.pending_dependencies)
  checkProof(state, d, required)
  const at = d.now.toISOString()
  return [...skippedSteps(state, ids, at, 'final'), final(ids, at)]
}

/** A decider for one command of this aggregate: the command's own `decide` with the shared `evolve`. */
export const taskDeciderOf = <C>(decide: (command: C, state: TaskState) => TaskEvent[]): Decider<TaskState, C, TaskEvent> =>
  ({ decide, evolve, initialState })
