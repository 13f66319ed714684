import type { HttpModule } from '../http/module.js'
import { operationsRoutes } from '../http/operations.js'
import { createTaskRoutes } from './create-task.js'
import { startTaskRoutes } from './start-task.js'
import { arriveTaskRoutes } from './arrive-task.js'
import { completeTaskRoutes } from './complete-task.js'
import { failTaskRoutes } from './fail-task.js'
import { cancelTaskRoutes } from './cancel-task.js'
import { taskAttachmentRoutes } from './task-attachments.js'
import { readTaskRoutes } from './read-tasks.js'

export { createTask, prepareTask, appendTask } from './create-task.js'
export { taskStream, type TaskEvent } from './task.js'
export { visibleTo, taskViewerOf, type TaskViewer } from './visibility.js'

/** Tasks of a carrier organization (DESIGN §3.9): the executable units of workflows and routes. */
export const tasksModule: HttpModule = {
  name: 'tasks',
  routes: operationsRoutes(
    createTaskRoutes, startTaskRoutes, arriveTaskRoutes, completeTaskRoutes, failTaskRoutes, cancelTaskRoutes, taskAttachmentRoutes, readTaskRoutes,
  ),
}
