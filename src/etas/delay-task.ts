import { createHash } from 'node:crypto'
import type { TaskDelayed, TaskDelayEvents } from '../../schemas/events/task-delays.js'
import type { TaskEvents } from '../../schemas/events/tasks.js'
import type { TaskRouteMarkers } from '../../schemas/events/routes.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import { handleCommand, type CommandContext, type CommandDeps } from '../shared/command-handler.js'
import type { Decider } from '../shared/decider.js'
import { stream } from '../../schemas/events/streams.js'

/**
 * DelayTask (DESIGN §3.10), the ETA engine's command on a task stream: record `TaskDelayed` the
 * first time the task's ETA passes its window's end by the threshold, and again only once an ETA
 * came back inside the window after the last one. A repeat (the engine asks on every position while
 * the ETA stays late) decides nothing: the stream is the authority, the engine's memory a shortcut.
 */
export interface DelayTask {
  type: 'DelayTask'
  data: {
    ulid: string
    eta: Date
    window_to: Date
    minutes_late: number
    /** When the engine last saw an ETA of this task back inside its window (null: never since a delay). */
    back_inside_at: Date | null
    now: Date
    /** Since when its ETAs have been late (issue 37); without it the event carries minutes_late and delayed_at alone. */
    late_since?: Date
  }
}

/** The events of a task's stream: the task module's, the routes' markers and the engine's own delays. */
export type DelayEvent = EventOf<typeof TaskEvents> | EventOf<typeof TaskRouteMarkers> | EventOf<typeof TaskDelayEvents>

export interface DelayState {
  exists: boolean
  organizationId: string | null
  routeId: number | null
  workflowId: number | null
  status: string | null
  /** The last TaskDelayed's `delayed_at`. */
  delayedAt: string | null
}

const STATUS_OF: Record<string, string> = {
  TaskStarted: 'started', TaskArrived: 'arrived', TaskCompleted: 'complete', TaskFailed: 'failed', TaskCancelled: 'cancelled',
}
const FINAL = new Set(['complete', 'failed', 'cancelled'])

export const initialState = (): DelayState => ({ exists: false, organizationId: null, routeId: null, workflowId: null, status: null, delayedAt: null })

/** The task's facts from its stream; generic so that MarkBackOnTime (back-on-time.ts) folds them alike and adds its own. */
export function evolve<S extends DelayState>(state: S, event: DelayEvent): S {
  switch (event.type) {
    case 'TaskCreated': {
      const d = event.data
      return { ...state, exists: true, organizationId: d.organization_id, workflowId: d.workflow_id, status: 'pending' }
    }
    case 'TaskRouted': return { ...state, routeId: event.data.route_id }
    case 'TaskUnrouted': return { ...state, routeId: null }
    case 'TaskDelayed': return { ...state, delayedAt: event.data.delayed_at }
    default: {
      const status = STATUS_OF[event.type]
      return status ? { ...state, status } : state
    }
  }
}

export function decide(command: DelayTask, state: DelayState): DelayEvent[] {
  const d = command.data
  // A reaction, not a request: a task that is gone or done is no longer late for anyone.
  if (!state.exists || (state.status !== null && FINAL.has(state.status))) return []
  if (state.delayedAt !== null && !(d.back_inside_at !== null && d.back_inside_at.getTime() > Date.parse(state.delayedAt))) return []
  return [{
    type: 'TaskDelayed',
    data: {
      ulid: d.ulid, organization_id: state.organizationId!, route_id: state.routeId, workflow_id: state.workflowId, status: state.status ?? 'pending',
      eta: d.eta.toISOString(), window_to: d.window_to.toISOString(), minutes_late: d.minutes_late, delayed_at: d.now.toISOString(),
      // The task's `eta` names (issue 37); without the engine's word on since when, since now.
      late_by_minutes: d.minutes_late, late_since: (d.late_since ?? d.now).toISOString(),
    } satisfies TaskDelayed,
  }]
}

export const decider: Decider<DelayState, DelayTask, DelayEvent> = { decide, evolve, initialState }

/**
 * The event's id, drawn from the task and the episode (the first delay, or the one after coming back
 * at `back_inside_at`): two engines asking at once during a hand-over store one event.
 */
export function delayEventId(ulid: string, backInsideAt: Date | null): string {
  const h = createHash('sha256').update(`task-delayed\u0000${ulid}\u0000${backInsideAt?.toISOString() ?? 'first'}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x50
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`
}

/** Runs DelayTask on the task's stream (no wait for the read models: nobody is waiting on an answer). */
export function delayTask(store: CommandDeps['store'], command: DelayTask, ctx: CommandContext) {
  return handleCommand({ store }, stream.task(command.data.ulid), decider, command, ctx, {
    eventId: () => delayEventId(command.data.ulid, command.data.back_inside_at),
  })
}
