import { FailTaskBody, TaskParams } from '../../schemas/api/tasks.js'
import type { FailureReason } from '../../schemas/events/tasks.js'
import type { RoutesPlugin } from '../http/module.js'
import { closeTask, taskDeciderOf, type Proof, type TaskEvent, type TaskState } from './task.js'
import { driversToo, proofOf, runTaskCommand, transitionResponses } from './task-command.js'

export interface FailTask { type: 'FailTask'; data: Proof & { organization_id: string; reason: FailureReason; pending_dependencies: string[]; now: Date } }

/** Any open state → failed, with a reason from the fixed list and the proof `requirements.fail` asks for. */
export function decide(command: FailTask, state: TaskState): TaskEvent[] {
  const d = command.data
  return closeTask(state, d, state.requirements.fail, (ids, at) =>
    ({ type: 'TaskFailed', data: { ...ids, reason: d.reason, notes: d.notes, signed_by: d.signed_by, barcode: d.barcode, attachment_ids: d.attachment_ids, failed_at: at } }))
}

export const decider = taskDeciderOf(decide)

export const failTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tasks/:ulid/fail', {
    config: driversToo,
    schema: {
      tags: ['tasks'], summary: 'Fail a task: reason no_answer, bad_address, rejected, damaged, closed or other',
      params: TaskParams, body: FailTaskBody, response: transitionResponses,
    },
  }, async (req) => runTaskCommand(platform, req, req.params.ulid, decider, async (ctx, organizationId, row) => {
    const b = req.body
    return { type: 'FailTask' as const, data: { organization_id: organizationId, reason: b.reason, ...(await proofOf(platform, organizationId, row, b)), now: ctx.now } }
  }))
}
