import { createHash } from 'node:crypto'
import type { TaskBackOnTime } from '../../schemas/events/task-delays.js'
import { handleCommand, type CommandContext, type CommandDeps } from '../shared/command-handler.js'
import type { Decider } from '../shared/decider.js'
import { stream } from '../../schemas/events/streams.js'
import { evolve as evolveDelayState, initialState as initialDelayState, type DelayEvent, type DelayState } from './delay-task.js'

/**
 * MarkBackOnTime (issue 37), the ETA engine's second command on a task stream: after a TaskDelayed,
 * an ETA back inside the window records `TaskBackOnTime`, once per delay. The engine asks when it
 * sees the ETA come back; the stream decides (a task done, never delayed or already back: nothing).
 */
export interface MarkBackOnTime {
  type: 'MarkBackOnTime'
  data: { ulid: string; eta: Date; window_to: Date; now: Date }
}

export interface BackOnTimeState extends DelayState {
  /** The `delayed_at` the last TaskBackOnTime answered. */
  answeredDelay: string | null
}

const OPEN = new Set(['pending', 'started'])

export const initialState = (): BackOnTimeState => ({ ...initialDelayState(), answeredDelay: null })

export function evolve(state: BackOnTimeState, event: DelayEvent): BackOnTimeState {
  return event.type === 'TaskBackOnTime' ? { ...state, answeredDelay: event.data.delayed_at } : evolveDelayState(state, event)
}

export function decide(command: MarkBackOnTime, state: BackOnTimeState): DelayEvent[] {
  const d = command.data
  // Only a waiting stop that was reported late and not yet reported back.
  if (!state.exists || state.status === null || !OPEN.has(state.status) || state.delayedAt === null || state.answeredDelay === state.delayedAt) return []
  return [{
    type: 'TaskBackOnTime',
    data: {
      ulid: d.ulid, organization_id: state.organizationId!, route_id: state.routeId, workflow_id: state.workflowId, status: state.status,
      eta: d.eta.toISOString(), window_to: d.window_to.toISOString(), late_by_minutes: null, late_since: null,
      delayed_at: state.delayedAt, back_on_time_at: d.now.toISOString(),
    } satisfies TaskBackOnTime,
  }]
}

export const decider: Decider<BackOnTimeState, MarkBackOnTime, DelayEvent> = { decide, evolve, initialState }

/** Drawn from the task and the delay it answers: two engines asking at once store one event. */
export function backOnTimeEventId(ulid: string, delayedAt: Date): string {
  const h = createHash('sha256').update(`task-back-on-time\u0000${ulid}\u0000${delayedAt.toISOString()}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x50
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`
}

export function markBackOnTime(store: CommandDeps['store'], command: MarkBackOnTime, delayedAt: Date, ctx: CommandContext) {
  return handleCommand({ store }, stream.task(command.data.ulid), decider, command, ctx, {
    eventId: () => backOnTimeEventId(command.data.ulid, delayedAt),
  })
}
