import type { WorkflowEventEmitted } from '../../schemas/events/workflows.js'
import { recordOnce, workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** An `emit_event` action: the event recorded on the workflow under its key. No HTTP route: the process manager (src/processes/workflow-manager.ts) sends it. */
export interface EmitEvent { type: 'EmitEvent'; data: WorkflowEventEmitted }

/** Recorded once per action key; refused once the workflow is final. */
export function decide(command: EmitEvent, state: WorkflowState): WorkflowEvent[] {
  return recordOnce(state, command.data.action_key, { type: 'WorkflowEventEmitted', data: command.data })
}

export const decider = workflowDeciderOf(decide)
