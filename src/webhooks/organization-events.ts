import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Static, TSchema } from 'typebox'
import { idOf } from '../../schemas/events/streams.js'
import { isEventName } from '../../schemas/events/event-map.js'
import { familySubject, type EventName, type EventsOf, type Family } from '../shared/event-subjects.js'

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

/** A family's events an organization hears, each read through its own payload type. */
type Notices<F extends Family> = {
  [K in EventName<F>]?: (data: EventsOf<F>[K] extends TSchema ? Static<EventsOf<F>[K]> : never, streamId: string) => Notice
}
type Notice = OrganizationEventNotice | undefined

/** A payload without organization_id (older or malformed) has nobody to tell. */
const hasOrganization = (d: { organization_id: string }): boolean => typeof d.organization_id === 'string'

/** An event's own fields without organization_id, with the given extras first. */
const notice = <D extends { organization_id: string }>(type: string, d: D, extra: Record<string, unknown>): Notice => {
  if (!hasOrganization(d)) return undefined
  const { organization_id, ...own } = d
  return { organization_id, type, data: { ...extra, ...own } }
}

/** A task step: its ulid (organizationEventOf takes the stream's when the data lacks it) and the status it leads to. */
const task = (type: string, status: string) => (d: { ulid: string; organization_id: string }): Notice => notice(type, d, { ulid: d.ulid, status })

/**
 * A workflow event: `{id, status}`, a few fields and its time (not the whole payload: WorkflowCreated
 * carries resolved addresses a receiver has no use for). Only `workflow-<id>` streams.
 */
const workflow = <D extends { organization_id: string; workflow_id: number }>(
  type: string, status: string, at: (d: D) => string, extra: (d: D) => Record<string, unknown> = () => ({}),
) => (d: D, streamId: string): Notice =>
  !hasOrganization(d) || idOf.workflow(streamId) === null ? undefined
    : { organization_id: d.organization_id, type, data: { id: d.workflow_id, status, ...extra(d), at: at(d) } }

/** A route event: `{id, status}` and its own fields (route payloads are small). Only `route-<id>` streams. */
const route = (type: string, status: string) => <D extends { organization_id: string; route_id: number }>(d: D, streamId: string): Notice => {
  if (!hasOrganization(d) || idOf.route(streamId) === null) return undefined
  const { organization_id, route_id, ...own } = d
  return { organization_id, type, data: { id: route_id, status, ...own } }
}

/** The families whose events organizations hear. */
const HEARD = ['task', 'workflow', 'route'] as const satisfies readonly Family[]

/** Domain event → its webhook, by family. TaskAttachmentAdded is deliberately not notified. */
const NOTICES: { [F in (typeof HEARD)[number]]: Notices<F> } = {
  task: {
    TaskCreated: task('task.created', 'pending'),
    TaskStarted: task('task.started', 'started'),
    TaskArrived: task('task.arrived', 'arrived'),
    TaskCompleted: task('task.completed', 'complete'),
    TaskFailed: task('task.failed', 'failed'),
    TaskCancelled: task('task.cancelled', 'cancelled'),
    // The ETA engine's (DESIGN §3.10): the payload carries the task's status, eta, window_to and minutes_late,
    // and the names of the task's `eta` (issue 37; the upcaster fills them in older events).
    TaskDelayed: (d) => notice('task.delayed', d, { ulid: d.ulid }),
    TaskBackOnTime: (d) => notice('task.back_on_time', d, { ulid: d.ulid }),
  },
  workflow: {
    WorkflowCreated: workflow('workflow.created', 'new', (d) => d.created_at, (d) => ({ blueprint: d.blueprint, shipment_id: d.shipment_id })),
    WorkflowCompleted: workflow('workflow.completed', 'completed', (d) => d.completed_at),
    WorkflowFailed: workflow('workflow.failed', 'failed', (d) => d.failed_at),
    WorkflowCancelled: workflow('workflow.cancelled', 'cancelled', (d) => d.cancelled_at),
    // emit_event (DESIGN §3.9): the blueprint names the event; the webhook type is custom.<event>.
    WorkflowEventEmitted: (d) => !hasOrganization(d) || typeof d.event !== 'string' ? undefined : {
      organization_id: d.organization_id, type: `custom.${d.event}`,
      data: { id: d.workflow_id, workflow_id: d.workflow_id, event: d.event, action_key: d.action_key, at: d.at },
    },
  },
  route: {
    RoutePublished: route('route.published', 'published'),
    RouteStarted: route('route.started', 'started'),
    RouteFinished: route('route.finished', 'finished'),
  },
}

/** Domain event type → its webhook: every family's lines in one table (the names do not repeat across families). */
export const ORGANIZATION_EVENTS = { ...NOTICES.task, ...NOTICES.workflow, ...NOTICES.route }

/** The bus subjects the intake consumer listens on: the families above, whole. */
export const ORGANIZATION_EVENT_SUBJECTS = HEARD.map(familySubject)

/**
 * Every type a subscription may name. Workflow and route types are listed ahead of their producers
 * (the design's examples), so a subscription made today keeps working when they land.
 */
export const KNOWN_WEBHOOK_TYPES: readonly string[] = [
  'task.created', 'task.started', 'task.arrived', 'task.completed', 'task.failed', 'task.cancelled', 'task.delayed', 'task.back_on_time',
  'workflow.created', 'workflow.completed', 'workflow.failed', 'workflow.cancelled',
  'route.published', 'route.started', 'route.finished',
]

/** The webhook notice of one recorded event, or undefined when organizations are not told of it. */
export function organizationEventOf(e: RecordedEvent): OrganizationEventNotice | undefined {
  if (!isEventName(ORGANIZATION_EVENTS, e.type) || typeof e.data !== 'object' || e.data === null) return undefined
  // The line of e.type reads e.data as that event's payload, as the map types a recorded event of that type.
  const n = (ORGANIZATION_EVENTS[e.type] as (data: unknown, streamId: string) => Notice)(e.data, e.streamId)
  if (!n) return undefined
  // A task event without a ulid in its data still names its task: the stream says which.
  if (n.type.startsWith('task.') && n.data['ulid'] === undefined) n.data['ulid'] = idOf.task(e.streamId)
  return n
}
