import type { WorkflowFailed } from '../../schemas/events/workflows.js'
import { recordOnce, workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** A `fail_workflow` action: the workflow ends failed. No HTTP route: the process manager (src/processes/workflow-manager.ts) sends it. */
export interface FailWorkflow { type: 'FailWorkflow'; data: WorkflowFailed }

/** Recorded once per action key; refused once the workflow is final. */
export function decide(command: FailWorkflow, state: WorkflowState): WorkflowEvent[] {
  return recordOnce(state, command.data.action_key, { type: 'WorkflowFailed', data: command.data })
}

export const decider = workflowDeciderOf(decide)
