import { CancelTaskBody, TaskParams } from '../../schemas/api/tasks.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireOpen, requireTask, taskDeciderOf, type TaskEvent, type TaskState } from './task.js'
import { driversToo, runTaskCommand, transitionResponses } from './task-command.js'

export interface CancelTask { type: 'CancelTask'; data: { organization_id: string; reason: string | null; now: Date } }

/** Any open state → cancelled (spec: POST /tasks/{ulid}/cancel). */
export function decide(command: CancelTask, state: TaskState): TaskEvent[] {
  const ids = requireTask(state, command.data.organization_id)
  requireOpen(state)
  return [{ type: 'TaskCancelled', data: { ...ids, reason: command.data.reason, cancelled_at: command.data.now.toISOString() } }]
}

export const decider = taskDeciderOf(decide)

export const cancelTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tasks/:ulid/cancel', {
    config: driversToo,
    schema: { tags: ['tasks'], summary: 'Cancel an open task', params: TaskParams, body: CancelTaskBody, response: transitionResponses },
  }, async (req) => runTaskCommand(platform, req, req.params.ulid, decider, (ctx, organizationId) => ({
    type: 'CancelTask', data: { organization_id: organizationId, reason: req.body?.reason?.trim() || null, now: ctx.now },
  })))
}
