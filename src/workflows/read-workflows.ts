import { Workflow, WorkflowParams, WorkflowsPage, WorkflowsQuery } from '../../schemas/api/workflows.js'
import { ErrorResponse, errorResponses } from '../../schemas/api/common.js'
import { NotFoundError } from '../shared/errors.js'
import { organizationOf } from '../http/plugins/auth.js'
import { pageOf, pageRequest } from '../http/pagination.js'
import { nextCursor, requestCursor } from '../http/listing-seek.js'
import type { RoutesPlugin } from '../http/module.js'
import { readsOf } from '../http/request-reads.js'
import { listWorkflows, readWorkflow } from './queries.js'
import { workflowStream } from './workflow.js'
import { EventHistory, HistoryQuery } from '../../schemas/api/audit.js'
import { historyResponse } from '../audit/history.js'

export const readWorkflowRoutes: RoutesPlugin = async (app, { platform }) => {
  app.get('/workflows', {
    schema: { tags: ['workflows'], summary: 'Workflows of the organization, oldest first, paginated', querystring: WorkflowsQuery, response: { 200: WorkflowsPage, ...errorResponses } },
  }, async (req, reply) => {
    const org = organizationOf(req)
    const paging = pageRequest(req.query)
    const cursor = requestCursor(req.query.cursor, 'number', paging)
    const { rows, total, hasMore, last } = await listWorkflows(readsOf(platform, reply).rm, org.id, req.query, paging, cursor)
    return { data: rows, ...pageOf(req, paging, total, rows.length, { next: nextCursor(hasMore, last, paging.page) }) }
  })

  app.get('/workflows/:id', {
    schema: { tags: ['workflows'], summary: 'A workflow with its tasks', params: WorkflowParams, response: { 200: Workflow, 404: ErrorResponse, ...errorResponses } },
  }, async (req) => {
    const workflow = await readWorkflow(platform.rm, organizationOf(req).id, req.params.id)
    if (!workflow) throw new NotFoundError('Workflow')
    return workflow
  })

  // The audit history (DESIGN §3.8): each action's event carries the task event that caused it (metadata.causation_id).
  app.get('/workflows/:id/events', {
    schema: {
      tags: ['workflows'], summary: 'Audit: the workflow\'s whole event history, in order, from the event log; ?proof=true adds inclusion proofs',
      params: WorkflowParams, querystring: HistoryQuery, response: { 200: EventHistory, 404: ErrorResponse, ...errorResponses },
    },
  }, async (req) => {
    const workflow = await readWorkflow(platform.rm, organizationOf(req).id, req.params.id)
    if (!workflow) throw new NotFoundError('Workflow')
    const events = await platform.store.readStream(workflowStream(workflow.id))
    return historyResponse(platform, workflowStream(workflow.id), events, req.query)
  })
}
