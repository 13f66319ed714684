import { CancelledWorkflow, WorkflowParams } from '../../schemas/api/workflows.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { DomainError, NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { commandContext } from '../http/command-context.js'
import type { RoutesPlugin } from '../http/module.js'
import type { Platform } from '../platform.js'
import { decider as cancelTask } from '../tasks/cancel-task.js'
import { taskStream } from '../tasks/task.js'
import { requireOpen, requireWorkflow, workflowDeciderOf, workflowStream, type WorkflowEvent, type WorkflowState } from './workflow.js'
import { readWorkflow } from './queries.js'
import { unrouteTask } from '../routes/index.js'

export interface CancelWorkflow { type: 'CancelWorkflow'; data: { organization_id: string; now: Date } }

/** new, scheduled, in_progress → cancelled; a final workflow is immutable (409), another tenant's unknown (404). */
export function decide(command: CancelWorkflow, state: WorkflowState): WorkflowEvent[] {
  const created = requireWorkflow(state, command.data.organization_id)
  requireOpen(state)
  return [{ type: 'WorkflowCancelled', data: { workflow_id: created.workflow_id, organization_id: created.organization_id, cancelled_at: command.data.now.toISOString() } }]
}

export const decider = workflowDeciderOf(decide)

/**
 * Cancels every open task of the workflow through the task's own cancel command (a final task, or
 * one whose creation never happened, is passed over). Exported: the process manager's
 * `cancel_remaining_tasks` (with the task that set it off left out) and a late task creation use it.
 */
export async function cancelTasks(platform: Platform, organizationId: string, ulids: readonly string[], ctx: CommandContext, reason: string): Promise<void> {
  for (const ulid of ulids) {
    try {
      await handleCommand(platform.commands, taskStream(ulid), cancelTask, { type: 'CancelTask', data: { organization_id: organizationId, reason, now: ctx.now } }, ctx)
    } catch (err) {
      if (!(err instanceof DomainError)) throw err // task_final or unknown: nothing to cancel
    }
  }
}

/**
 * new, scheduled, in_progress → cancelled (a final workflow: 409 `workflow_final`), then every open
 * task cancelled and taken off its route. The cancel is recorded first: from then on the process manager runs nothing for
 * this workflow (its appends conflict or find it final), so no task appears after the cancel.
 */
export async function cancelWorkflow(platform: Platform, organizationId: string, workflowId: number, ctx: CommandContext): Promise<void> {
  const { state } = await handleCommand(platform.commands, workflowStream(workflowId), decider, { type: 'CancelWorkflow', data: { organization_id: organizationId, now: ctx.now } }, ctx)
  await cancelTasks(platform, organizationId, state.tasks.map((t) => t.ulid), ctx, 'workflow cancelled')
  // DESIGN §3.9: a cancelled workflow's tasks leave their routes (a task cancelled on its own stays, counted as cancelled).
  for (const t of state.tasks) await unrouteTask(platform, ctx, organizationId, t.ulid, { onlyCancelled: true })
}

export const cancelWorkflowRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/workflows/:id/cancel', {
    schema: {
      tags: ['workflows'], summary: 'Cancel a workflow and every open task of it',
      params: WorkflowParams, response: { 200: CancelledWorkflow, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const org = organizationOf(req)
    await cancelWorkflow(platform, org.id, req.params.id, commandContext(platform, req))
    const workflow = await readWorkflow(platform.rm, org.id, req.params.id)
    if (!workflow) throw new NotFoundError('Workflow')
    return { data: { workflow } }
  })
}
