import { TaskParams } from '../../schemas/api/tasks.js'
import { IllegalStateError } from '../shared/errors.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireDependenciesDone, requireOpen, requireTask, taskDeciderOf, type TaskEvent, type TaskState } from './task.js'
import { dependenciesOf, pendingDependencies } from './queries.js'
import { driversToo, runTaskCommand, transitionResponses } from './task-command.js'

/** `pending_dependencies`: the task's dependencies not complete when the command was built. */
export interface StartTask { type: 'StartTask'; data: { organization_id: string; pending_dependencies: string[]; now: Date } }

/** pending → started, once every dependency is complete. */
export function decide(command: StartTask, state: TaskState): TaskEvent[] {
  const ids = requireTask(state, command.data.organization_id)
  requireOpen(state)
  if (state.status !== 'pending') throw new IllegalStateError(`The task is already ${state.status}.`, 'invalid_transition')
  requireDependenciesDone(command.data.pending_dependencies)
  return [{ type: 'TaskStarted', data: { ...ids, started_at: command.data.now.toISOString() } }]
}

export const decider = taskDeciderOf(decide)

export const startTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tasks/:ulid/start', {
    config: driversToo,
    schema: { tags: ['tasks'], summary: 'Start a task (on the way); its dependencies must be complete', params: TaskParams, response: transitionResponses },
  }, async (req) => runTaskCommand(platform, req, req.params.ulid, decider, async (ctx, organizationId, row) => ({
    type: 'StartTask', data: { organization_id: organizationId, pending_dependencies: await pendingDependencies(platform.rm, organizationId, dependenciesOf(row)), now: ctx.now },
  })))
}
