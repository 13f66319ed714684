import type { RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { TaskEvents } from '../../schemas/events/tasks.js'
import { TaskRouteMarkers } from '../../schemas/events/routes.js'
import { isEvent, isEventOf, pick } from '../../schemas/events/event-map.js'

/** What `scheduled` needs of one of a workflow's tasks, from its stream. */
export interface ScheduleFacts { open: boolean; routed: boolean; assigned: boolean }

const FINAL_STEPS = pick(TaskEvents, 'TaskCompleted', 'TaskFailed', 'TaskCancelled')

/** A task's facts from its stream's events (in order). */
export function scheduleFacts(events: readonly RecordedEvent[]): ScheduleFacts {
  let open = true
  let routed = false
  let assigned = false
  for (const e of events) {
    if (isEvent(TaskEvents, 'TaskCreated', e)) {
      const d = e.data
      assigned = d.assignee_id !== null && d.time_windows.length > 0
    } else if (isEvent(TaskRouteMarkers, 'TaskRouted', e)) routed = true
    else if (isEvent(TaskRouteMarkers, 'TaskUnrouted', e)) routed = false
    else if (isEventOf(FINAL_STEPS, e)) open = false
  }
  return { open, routed, assigned }
}

/**
 * DESIGN §3.9: a workflow is `scheduled` when every open task is on a route, or has an assignee
 * and a time window. A workflow without open tasks is not (nothing was scheduled).
 */
export function isScheduled(tasks: readonly ScheduleFacts[]): boolean {
  const open = tasks.filter((t) => t.open)
  return open.length > 0 && open.every((t) => t.routed || t.assigned)
}
