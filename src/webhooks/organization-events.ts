import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import type { Static } from 'typebox'
import { idOf } from '../../schemas/events/streams.js'
import { isEventOf, type EventMap, type EventOf } from '../../schemas/events/event-map.js'
import { eventsOf, familySubject, type Family } from '../shared/event-subjects.js'

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

/** A line for each event of a map, reading that event's payload as its own type. */
type Notices<M extends EventMap> = { [K in keyof M & string]: (data: Static<M[K]>, streamId: string) => Notice }
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

/**
 * The events organizations hear, by family, as maps: the notices below need a line for each, and
 * a recorded event is taken only when a map has it. TaskAttachmentAdded is deliberately not notified.
 */
const HEARD_EVENTS = {
  task: eventsOf('task', 'TaskCreated', 'TaskStarted', 'TaskArrived', 'TaskCompleted', 'TaskFailed', 'TaskCancelled', 'TaskDelayed', 'TaskBackOnTime'),
  workflow: eventsOf('workflow', 'WorkflowCreated', 'WorkflowCompleted', 'WorkflowFailed', 'WorkflowCancelled', 'WorkflowEventEmitted'),
  route: eventsOf('route', 'RoutePublished', 'RouteStarted', 'RouteFinished'),
} as const satisfies { [F in Family]?: EventMap }
type Heard = typeof HEARD_EVENTS
const HEARD = Object.keys(HEARD_EVENTS) as (keyof Heard)[]

/** Domain event → its webhook, by family. */
const NOTICES: { [F in keyof Heard]: Notices<Heard[F]> } = {
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

/** The bus subjects the intake consumer listens on: the families above, whole (it takes their events by the maps). */
export const ORGANIZATION_EVENT_SUBJECTS = HEARD.map(familySubject)

/** Whether organizations are told of this event at all (its family's map has it). */
export const isOrganizationEvent = (e: { type: string; data: unknown }): boolean => HEARD.some((f) => isEventOf(HEARD_EVENTS[f], e))

/** The line of an event of `map`: its payload read as that event's. */
function noticeOf<M extends EventMap>(map: M, notices: Notices<M>, e: RecordedEvent): Notice {
  if (!isEventOf(map, e) || typeof e.data !== 'object' || e.data === null) return undefined
  const event: EventOf<M> = e
  // The line of the event's own type: its data is that type's, as the map narrowed it.
  return (notices[event.type] as (data: EventOf<M>['data'], streamId: string) => Notice)(event.data, e.streamId)
}

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
  const n = noticeOf(HEARD_EVENTS.task, NOTICES.task, e) ?? noticeOf(HEARD_EVENTS.workflow, NOTICES.workflow, e) ?? noticeOf(HEARD_EVENTS.route, NOTICES.route, e)
  if (!n) return undefined
  // A task event without a ulid in its data still names its task: the stream says which.
  if (n.type.startsWith('task.') && n.data['ulid'] === undefined) n.data['ulid'] = idOf.task(e.streamId)
  return n
}
