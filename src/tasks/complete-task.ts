import { CompleteTaskBody, TaskParams } from '../../schemas/api/tasks.js'
import type { RoutesPlugin } from '../http/module.js'
import { closeTask, taskDeciderOf, type Proof, type TaskEvent, type TaskState } from './task.js'
import { driversToo, proofOf, runTaskCommand, transitionResponses } from './task-command.js'

export interface CompleteTask { type: 'CompleteTask'; data: Proof & { organization_id: string; pending_dependencies: string[]; now: Date } }

/**
 * Any open state → complete (missing steps recorded as skipped, at the same time). The final-state
 * check comes first: of a complete and a cancel racing, the loser is a 409 whatever it carried.
 */
export function decide(command: CompleteTask, state: TaskState): TaskEvent[] {
  const d = command.data
  return closeTask(state, d, state.requirements.complete, (ids, at) =>
    ({ type: 'TaskCompleted', data: { ...ids, signed_by: d.signed_by, notes: d.notes, barcode: d.barcode, attachment_ids: d.attachment_ids, completed_at: at } }))
}

export const decider = taskDeciderOf(decide)

export const completeTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tasks/:ulid/complete', {
    config: driversToo,
    schema: {
      tags: ['tasks'], summary: 'Complete a task, with the proof its requirements ask for (signature, photo, barcode, notes)',
      params: TaskParams, body: CompleteTaskBody, response: transitionResponses,
    },
  }, async (req) => runTaskCommand(platform, req, req.params.ulid, decider, async (ctx, organizationId, row) => {
    const b = req.body ?? {}
    return { type: 'CompleteTask' as const, data: { organization_id: organizationId, ...(await proofOf(platform, organizationId, row, b)), now: ctx.now } }
  }))
}
