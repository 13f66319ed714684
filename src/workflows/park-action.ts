import type { WorkflowActionParked } from '../../schemas/events/workflows.js'
import { workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** An action that kept failing, recorded on the workflow (its `errors`). No HTTP route: the process manager sends it on the last delivery. */
export interface ParkAction { type: 'ParkAction'; data: WorkflowActionParked }

/** Once per key, and never for a key already spent. */
export function decide(command: ParkAction, state: WorkflowState): WorkflowEvent[] {
  return state.parked.has(command.data.action_key) || state.done.has(command.data.action_key) ? [] : [{ type: 'WorkflowActionParked', data: command.data }]
}

export const decider = workflowDeciderOf(decide)
