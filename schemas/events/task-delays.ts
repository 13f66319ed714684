import { Type, type Static } from 'typebox'

// The ETA engine's one event (DESIGN §3.10), in the task stream `task-<ulid>`, version 1: the
// task's ETA passed the end of its time window by DELAY_THRESHOLD_MINUTES. Named like the task's
// steps (ulid, organization, route, workflow) so that a consumer needs nothing but the event.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()])

/** What both of the engine's events say of the task and its ETA against the window. */
const etaAgainstWindow = {
  ulid: Type.String(),
  organization_id: Type.String(),
  route_id: Nullable(Type.Integer()),
  workflow_id: Nullable(Type.Integer()),
  /** The task's status when the ETA was found late, or back on time (pending or started). */
  status: Type.String(),
  /** The ETA that passed the window, or is back inside it. */
  eta: Type.String(),
  /** The end of the window (the last one, when it passed them all). */
  window_to: Type.String(),
}

export const TaskDelayed = Type.Object({
  ...etaAgainstWindow,
  minutes_late: Type.Integer(),
  delayed_at: Type.String(),
  /** Issue 37, the task's `eta` names (schema version 2; version 1 events are read with minutes_late and delayed_at). */
  late_by_minutes: Type.Integer(),
  late_since: Type.String(),
})
export type TaskDelayed = Static<typeof TaskDelayed>

/**
 * The ETA engine's second event (issue 37): after a TaskDelayed, the task's ETA came back inside its
 * window. Once per delay (the one it answers is `delayed_at`).
 */
export const TaskBackOnTime = Type.Object({
  ...etaAgainstWindow,
  /** Null: on time (the names of the task's `eta`). */
  late_by_minutes: Type.Null(),
  late_since: Type.Null(),
  /** The TaskDelayed this answers. */
  delayed_at: Type.String(),
  back_on_time_at: Type.String(),
})
export type TaskBackOnTime = Static<typeof TaskBackOnTime>

/** The ETA engine's events in a `task-<ulid>` stream. */
export const TaskDelayEvents = { TaskDelayed, TaskBackOnTime } as const
