import type { WorkflowProgressed } from '../../schemas/events/workflows.js'
import { workflowDeciderOf, type WorkflowEvent, type WorkflowState } from './workflow.js'

/** A task of the workflow started (or arrived, or ended): new or scheduled → in_progress. No HTTP route: the process manager sends it. */
export interface MarkInProgress { type: 'MarkInProgress'; data: WorkflowProgressed }

/** Only forward: a later task starting, or a start arriving after the end, changes nothing. */
export function decide(command: MarkInProgress, state: WorkflowState): WorkflowEvent[] {
  return state.status === 'new' || state.status === 'scheduled' ? [{ type: 'WorkflowProgressed', data: command.data }] : []
}

export const decider = workflowDeciderOf(decide)
