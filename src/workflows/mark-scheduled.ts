import type { WorkflowScheduled } from '../../schemas/events/workflows.js'
import { workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** Every open task of the workflow is on a route (or assigned with a window): new → scheduled. No HTTP route: the process manager sends it. */
export interface MarkScheduled { type: 'MarkScheduled'; data: WorkflowScheduled }

/** Only from new: anything later changes nothing. */
export function decide(command: MarkScheduled, state: WorkflowState): WorkflowEvent[] {
  return state.status === 'new' ? [{ type: 'WorkflowScheduled', data: command.data }] : []
}

export const decider = workflowDeciderOf(decide)
