import { TaskParams } from '../../schemas/api/tasks.js'
import { IllegalStateError } from '../shared/errors.js'
import type { RoutesPlugin } from '../http/module.js'
import { requireDependenciesDone, requireOpen, requireTask, skippedSteps, taskDeciderOf, type TaskEvent, type TaskState } from './task.js'
import { dependenciesOf, pendingDependencies } from './queries.js'
import { driversToo, runTaskCommand, transitionResponses } from './task-command.js'

export interface ArriveTask { type: 'ArriveTask'; data: { organization_id: string; pending_dependencies: string[]; now: Date } }

/** started → arrived; from pending the start is recorded as skipped (and needs the dependencies done). */
export function decide(command: ArriveTask, state: TaskState): TaskEvent[] {
  const ids = requireTask(state, command.data.organization_id)
  requireOpen(state)
  if (state.status === 'arrived') throw new IllegalStateError('The task has already arrived.', 'invalid_transition')
  if (state.status === 'pending') requireDependenciesDone(command.data.pending_dependencies)
  const at = command.data.now.toISOString()
  return [...skippedSteps(state, ids, at, 'arrived'), { type: 'TaskArrived', data: { ...ids, arrived_at: at } }]
}

export const decider = taskDeciderOf(decide)

export const arriveTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/tasks/:ulid/arrive', {
    config: driversToo,
    schema: { tags: ['tasks'], summary: 'Record arrival at the task\'s place', params: TaskParams, response: transitionResponses },
  }, async (req) => runTaskCommand(platform, req, req.params.ulid, decider, async (ctx, organizationId, row) => ({
    type: 'ArriveTask',
    data: { organization_id: organizationId, pending_dependencies: row.status === 'pending' ? await pendingDependencies(platform.rm, organizationId, dependenciesOf(row)) : [], now: ctx.now },
  })))
}
