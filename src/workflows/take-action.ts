import type { WorkflowActionTaken } from '../../schemas/events/workflows.js'
import { recordOnce, workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** An action run for its effect (cancel tasks, start a workflow, set a shipment status, a spent retry), recorded under its key. No HTTP route: the process manager (src/processes/workflow-manager.ts) sends it. */
export interface TakeAction { type: 'TakeAction'; data: WorkflowActionTaken }

/** Recorded once per action key; refused once the workflow is final. */
export function decide(command: TakeAction, state: WorkflowState): WorkflowEvent[] {
  return recordOnce(state, command.data.action_key, { type: 'WorkflowActionTaken', data: command.data })
}

export const decider = workflowDeciderOf(decide)
