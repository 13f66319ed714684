import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { idOf } from '../../schemas/events/streams.js'

/**
 * The registry of organization webhook events (DESIGN §3.9): which domain events an organization's
 * webhooks hear, under which type, with which data. Pure: an event in, a notice or nothing out.
 * Workflows and routes add their lines here (a mapping, its family's bus subject, its known types);
 * nothing else in the delivery engine knows about them.
 */
export interface OrganizationEventNotice {
  /** The organization's public id, as the events carry it. */
  organization_id: string
  /** e.g. `task.completed`. */
  type: string
  /** At least `{ulid, status}` (or the aggregate's id), plus the event's own fields without organization_id. */
  data: Record<string, unknown>
}

type Mapper = (e: RecordedEvent) => OrganizationEventNotice | undefined

/** The event's payload as an object (null when it is none: such an event is no webhook). */
const dataOf = (e: RecordedEvent): Record<string, unknown> | null => (isObject(e.data) ? e.data : null)
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

/** An event whose data carries `organization_id`: its data without it, with the given extras first. */
const notice = (type: string, extra: (d: Record<string, unknown>) => Record<string, unknown>): Mapper => (e) => {
  const d = dataOf(e)
  if (!d || typeof d['organization_id'] !== 'string') return undefined
  const { organization_id, ...own } = d
  return { organization_id, type, data: { ...extra(d), ...own } }
}

/** A task event: the ulid from the data (or the stream) and the status the transition leads to. */
const task = (type: string, status: string): Mapper =>
  notice(type, (d) => ({ ulid: typeof d['ulid'] === 'string' ? d['ulid'] : undefined, status }))

/**
 * A workflow event: `{id, status}` and a few fields (not the whole payload: WorkflowCreated carries
 * resolved addresses a receiver has no use for). Only `workflow-<id>` streams.
 */
const workflow = (type: string, status: string, extra: (d: Record<string, unknown>) => Record<string, unknown> = () => ({})): Mapper => (e) => {
  const d = dataOf(e)
  if (!d || typeof d['organization_id'] !== 'string' || !/^workflow-\d+$/.test(e.streamId)) return undefined
  const at = d['completed_at'] ?? d['failed_at'] ?? d['cancelled_at'] ?? d['created_at']
  return { organization_id: d['organization_id'], type, data: { id: d['workflow_id'], status, ...extra(d), at } }
}

/** A route event: `{id, status}` and its own fields (route payloads are small). Only `route-<id>` streams. */
const route = (type: string, status: string): Mapper => (e) => {
  const d = dataOf(e)
  if (!d || typeof d['organization_id'] !== 'string' || !/^route-\d+$/.test(e.streamId)) return undefined
  const { organization_id, route_id, ...own } = d
  return { organization_id, type, data: { id: route_id, status, ...own } }
}

/** Domain event type → its webhook. TaskAttachmentAdded is deliberately not notified. */
export const ORGANIZATION_EVENTS: Readonly<Record<string, Mapper>> = {
  TaskCreated: task('task.created', 'pending'),
  TaskStarted: task('task.started', 'started'),
  TaskArrived: task('task.arrived', 'arrived'),
  TaskCompleted: task('task.completed', 'complete'),
  TaskFailed: task('task.failed', 'failed'),
  TaskCancelled: task('task.cancelled', 'cancelled'),
  // The ETA engine's (DESIGN §3.10): the payload carries the task's status, eta, window_to and minutes_late.
  TaskDelayed: notice('task.delayed', (d) => ({ ulid: typeof d['ulid'] === 'string' ? d['ulid'] : undefined })),
  WorkflowCreated: workflow('workflow.created', 'new', (d) => ({ blueprint: d['blueprint'], shipment_id: d['shipment_id'] })),
  WorkflowCompleted: workflow('workflow.completed', 'completed'),
  WorkflowFailed: workflow('workflow.failed', 'failed'),
  WorkflowCancelled: workflow('workflow.cancelled', 'cancelled'),
  RoutePublished: route('route.published', 'published'),
  RouteStarted: route('route.started', 'started'),
  RouteFinished: route('route.finished', 'finished'),
  // emit_event (DESIGN §3.9): the blueprint names the event; the webhook type is custom.<event>.
  WorkflowEventEmitted: (e) => {
    const d = dataOf(e)
    if (!d || typeof d['organization_id'] !== 'string' || typeof d['event'] !== 'string') return undefined
    return { organization_id: d['organization_id'], type: `custom.${d['event']}`, data: { id: d['workflow_id'], workflow_id: d['workflow_id'], event: d['event'], action_key: d['action_key'], at: d['at'] } }
  },
}

/** The bus subjects the intake consumer listens on: one line per family of streams above. */
export const ORGANIZATION_EVENT_SUBJECTS = ['events.task.>', 'events.workflow.>', 'events.route.>']

/**
 * Every type a subscription may name. Workflow and route types are listed ahead of their producers
 * (the design's examples), so a subscription made today keeps working when they land.
 */
export const KNOWN_WEBHOOK_TYPES: readonly string[] = [
  'task.created', 'task.started', 'task.arrived', 'task.completed', 'task.failed', 'task.cancelled', 'task.delayed',
  'workflow.created', 'workflow.completed', 'workflow.failed', 'workflow.cancelled',
  'route.published', 'route.started', 'route.finished',
]

/** The webhook notice of one recorded event, or undefined when organizations are not told of it. */
export function organizationEventOf(e: RecordedEvent): OrganizationEventNotice | undefined {
  const map = ORGANIZATION_EVENTS[e.type]
  if (!map) return undefined
  const n = map(e)
  if (!n) return undefined
  // A task event without a ulid in its data still names its task: the stream says which.
  if (n.type.startsWith('task.') && n.data['ulid'] === undefined) n.data['ulid'] = idOf.task(e.streamId)
  return n
}
