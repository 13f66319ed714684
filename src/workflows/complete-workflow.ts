import type { WorkflowCompleted } from '../../schemas/events/workflows.js'
import { recordOnce, workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** A `complete_workflow` action: the workflow ends completed. No HTTP route: the process manager (src/processes/workflow-manager.ts) sends it. */
export interface CompleteWorkflow { type: 'CompleteWorkflow'; data: WorkflowCompleted }

/** Recorded once per action key; refused once the workflow is final. */
export function decide(command: CompleteWorkflow, state: WorkflowState): WorkflowEvent[] {
  return recordOnce(state, command.data.action_key, { type: 'WorkflowCompleted', data: command.data })
}

export const decider = workflowDeciderOf(decide)
