import { DomainError, ValidationError } from '../shared/errors.js'
import { setShipmentStatusFromRoutes } from '../shipments/routes-status.js'
import { cancelWorkflow } from '../workflows/cancel-workflow.js'
import { reservedWorkflow, startWorkflow } from '../workflows/start-workflow.js'
import { shipmentWorkflowKey, type ShipmentWorkflowsPort } from './service-routes-shipments.js'
import type { ShipmentStatusPort } from './workflow-manager.js'

/**
 * The workflows' `set_shipment_status` through the shipment's own decider. A shipment whose rules
 * refuse the status (final, cancelled, a carrier that runs its own statuses) is an outcome to
 * record on the workflow, not a failure to retry: retrying cannot change the answer.
 */
export const shipmentStatuses: ShipmentStatusPort = {
  async setShipmentStatusFromRoutes(platform, shipmentId, status, substatus, ctx, details) {
    try {
      const r = await setShipmentStatusFromRoutes(platform, shipmentId, status, substatus, ctx, details)
      return r.changed ? 'done' : 'done before'
    } catch (err) {
      if (err instanceof DomainError && !(err instanceof ValidationError)) return `refused by the shipment: ${err.code}`
      throw err
    }
  },
}

/** Shipments of `service_routes` carriers start and cancel their workflows in the carrier organization. */
export const shipmentWorkflows: ShipmentWorkflowsPort = {
  async startShipmentWorkflow(platform, carrierOrganizationId, input, ctx) {
    // The key reserves the start in the workflow's own write: a repeated call makes nothing.
    return startWorkflow(platform, carrierOrganizationId, { blueprint_key: input.blueprint_key, data: input.data }, ctx, {
      startedBy: ctx.idempotencyKey, shipment: input.shipment,
    })
  },
  async cancelShipmentWorkflow(platform, carrierOrganizationId, input, ctx) {
    // The start's reservation names the workflow it made (none: the start made none).
    const workflowId = await reservedWorkflow(platform, shipmentWorkflowKey(input.shipment_id, 'start'))
    if (workflowId === undefined) return
    try {
      await cancelWorkflow(platform, carrierOrganizationId, workflowId, ctx)
    } catch (err) {
      // Ended meanwhile (its last task settled it): nothing left to cancel.
      if (!(err instanceof DomainError && err.code === 'workflow_final')) throw err
    }
  },
}
