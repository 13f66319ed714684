import { TaskEvents } from '../../schemas/events/tasks.js'
import { TaskRouteMarkers } from '../../schemas/events/routes.js'
import { pick, type EventOf } from '../../schemas/events/event-map.js'

/** What `scheduled` needs of one of a workflow's tasks, from its stream. */
export interface ScheduleFacts { open: boolean; routed: boolean; assigned: boolean }

const FINAL_STEPS = pick(TaskEvents, 'TaskCompleted', 'TaskFailed', 'TaskCancelled')

/** What `scheduled` needs of a task before its stream says anything. */
export const noScheduleFacts = (): ScheduleFacts => ({ open: true, routed: false, assigned: false })

/** The events of a task's stream that `scheduled` reads. */
export const ScheduleEvents = { ...pick(TaskEvents, 'TaskCreated'), ...FINAL_STEPS, ...TaskRouteMarkers }

/** A task's facts moved on by one event of its stream. */
export function evolveScheduleFacts(facts: ScheduleFacts, e: EventOf<typeof ScheduleEvents>): ScheduleFacts {
  switch (e.type) {
    case 'TaskCreated': return { ...facts, assigned: e.data.assignee_id !== null && e.data.time_windows.length > 0 }
    case 'TaskRouted': return { ...facts, routed: true }
    case 'TaskUnrouted': return { ...facts, routed: false }
    default: return { ...facts, open: false }
  }
}

/**
 * DESIGN §3.9: a workflow is `scheduled` when every open task is on a route, or has an assignee
 * and a time window. A workflow without open tasks is not (nothing was scheduled).
 */
export function isScheduled(tasks: readonly ScheduleFacts[]): boolean {
  const open = tasks.filter((t) => t.open)
  return open.length > 0 && open.every((t) => t.routed || t.assigned)
}
