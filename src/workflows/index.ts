import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { startWorkflowRoutes } from './start-workflow.js'
import { cancelWorkflowRoutes } from './cancel-workflow.js'
import { readWorkflowRoutes } from './read-workflows.js'

export { startWorkflow } from './start-workflow.js'
export { cancelWorkflow } from './cancel-workflow.js'

/** Runs of blueprints (DESIGN §3.9); their later steps are run by src/processes/workflow-manager.ts. */
export const workflowsModule: HttpModule = {
  name: 'workflows',
  routes: operationsRoutes(startWorkflowRoutes, cancelWorkflowRoutes, readWorkflowRoutes),
}
