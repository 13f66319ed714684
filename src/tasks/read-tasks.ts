import { Task, TaskParams, TasksPage, TasksQuery } from '../../schemas/api/tasks.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { findTask, listTasks, toTask } from './queries.js'
import { taskStream } from './task.js'
import { taskViewerOf } from './visibility.js'
import { driversToo } from './task-command.js'
import { EventHistory, HistoryQuery } from '../../schemas/api/audit.js'
import { historyResponse } from '../audit/history.js'

export const readTaskRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/tasks', {
    config: driversToo,
    schema: {
      tags: ['tasks'], summary: 'Tasks, oldest first, paginated (perPage default 20); a driver sees its own',
      querystring: TasksQuery, response: { 200: TasksPage, ...errorResponses },
    },
  }, async (req, reply) => {
    const paging = pageRequest(req.query)
    const cursor = requestCursor(req.query.cursor, 'string', paging)
    const { rows, total, hasMore, last } = await listTasks(readsOf(platform, reply).rm, taskViewerOf(req), req.query, paging, cursor)
    return { data: rows.map(toTask), ...pageOf(req, paging, total, rows.length, { next: nextCursor(hasMore, last, paging.page) }) }
  })

  app.get('/tasks/:ulid', {
    config: driversToo,
    schema: { tags: ['tasks'], summary: 'A task (at root)', params: TaskParams, response: { 200: Task, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const row = await findTask(platform.rm, taskViewerOf(req), req.params.ulid)
    if (!row) throw new NotFoundError('Task')
    return toTask(row)
  })

  // The audit history, as shipments give theirs (DESIGN §3.8): every event with its actor.
  app.get('/tasks/:ulid/events', {
    schema: {
      tags: ['tasks'], summary: 'Audit: the task\'s whole event history, in order, from the event log; ?proof=true adds inclusion proofs',
      params: TaskParams, querystring: HistoryQuery, response: { 200: EventHistory, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const row = await findTask(platform.rm, taskViewerOf(req), req.params.ulid)
    if (!row) throw new NotFoundError('Task')
    const events = await platform.store.readStream(taskStream(row.ulid))
    return historyResponse(platform, taskStream(row.ulid), events, req.query)
  })
}
