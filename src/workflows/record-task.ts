import type { WorkflowTaskCreated } from '../../schemas/events/workflows.js'
import { recordOnce, workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/**
 * A `create_task` or `retry` action: the task it made, recorded under the action's key (the
 * TaskCreated itself is the tasks module's, appended in the same write). No HTTP route: the process
 * manager (src/processes/workflow-manager.ts) sends it.
 */
export interface RecordTask { type: 'RecordTask'; data: WorkflowTaskCreated & { action_key: string } }

/** Recorded once per action key; refused once the workflow is final. */
export function decide(command: RecordTask, state: WorkflowState): WorkflowEvent[] {
  return recordOnce(state, command.data.action_key, { type: 'WorkflowTaskCreated', data: command.data })
}

export const decider = workflowDeciderOf(decide)
