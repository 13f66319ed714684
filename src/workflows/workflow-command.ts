import type { TaskCreated } from '../../schemas/events/tasks.js'
import type { Platform } from '../platform.js'
import { handleCommand, handleCommandFromRow, type CommandContext } from '../shared/command-handler.js'
import type { Decider } from '../shared/decider.js'
import { DomainError } from '../shared/errors.js'
import { workflowStream, type WorkflowEvent, type WorkflowState } from './workflow.js'
import { newTaskStream } from './workflow-tasks.js'
import { decider as recordTaskDecider, type RecordTask } from './record-task.js'
import { decide as markInProgress } from './mark-in-progress.js'
import type { WorkflowProgressed } from '../../schemas/events/workflows.js'

/** A final workflow refuses every later record: for its process manager that is nothing left to do. */
const refusedAsFinal = (err: unknown): boolean => err instanceof DomainError && err.code === 'workflow_final'

/**
 * The slice's decider with a task's start recorded ahead of its decision, in the same append: an
 * outcome stands for its task's start too (a complete of a pending task), one write per step.
 */
function withProgress<C>(decider: Decider<WorkflowState, C, WorkflowEvent>, progress: WorkflowProgressed | undefined): Decider<WorkflowState, C, WorkflowEvent> {
  if (!progress) return decider
  return {
    ...decider,
    decide(command, state) {
      const started = markInProgress({ type: 'MarkInProgress', data: progress }, state)
      return [...started, ...decider.decide(command, started.reduce(decider.evolve, state))]
    },
  }
}

/**
 * The command path of the process manager's commands on a workflow: the workflow's stream read,
 * the slice's decider (after the task's start `progress`, when given), an append expecting the version read, again on a conflict. A spent action
 * key decides nothing, so a repeat writes nothing; once the workflow is final (cancelled between
 * the decision and now) nothing is recorded either.
 */
export async function runWorkflowCommand<C>(
  platform: Platform, workflowId: number, decider: Decider<WorkflowState, C, WorkflowEvent>, command: C, ctx: CommandContext,
  progress?: WorkflowProgressed,
): Promise<WorkflowEvent[]> {
  try {
    return (await handleCommand(platform.commands, workflowStream(workflowId), withProgress(decider, progress), command, ctx)).events
  } catch (err) {
    if (refusedAsFinal(err)) return []
    throw err
  }
}

/**
 * A step's next task (with the start its outcome stands for, when not recorded yet): its TaskCreated (the tasks module's) and its record on the workflow in ONE
 * atomic write, so no task exists unrecorded; nothing when the action's key is spent already.
 */
export async function recordStepTask(
  platform: Platform, command: RecordTask, task: TaskCreated, ctx: CommandContext, progress?: WorkflowProgressed,
): Promise<WorkflowEvent[]> {
  const streamId = workflowStream(command.data.workflow_id)
  try {
    const { events } = await handleCommandFromRow(platform.commands, {
      streamId, decider: withProgress(recordTaskDecider, progress), command: () => command, row: undefined,
      appends: (events, expected) => [{ streamId, events, expected }, ...(events.some((e) => e.type === 'WorkflowTaskCreated') ? [newTaskStream(task)] : [])],
    }, ctx)
    return events
  } catch (err) {
    if (refusedAsFinal(err)) return []
    throw err
  }
}
