import { NOTIFIER_CONSUMER, NOTIFIER_SUBJECTS, ORGANIZATION_WEBHOOKS_CONSUMER, ORGANIZATION_WEBHOOKS_SUBJECTS } from './notifier.js'
import { EXPIRY_SCHEDULER_CONSUMER, EXPIRY_SCHEDULER_SUBJECTS } from './shipment-expiry.js'
import { WORKFLOW_MANAGER_CONSUMER, WORKFLOW_MANAGER_SUBJECTS } from './workflow-manager.js'
import { SERVICE_ROUTES_SHIPMENTS_CONSUMER, SERVICE_ROUTES_SHIPMENTS_SUBJECTS } from './service-routes-shipments.js'

/**
 * The durable consumers of relayed events and their subjects: the ones that start at the head of
 * the log (consumer-start.ts) and that `cli replay` can hand history to.
 */
export const EVENT_CONSUMERS: Readonly<Record<string, readonly string[]>> = {
  [NOTIFIER_CONSUMER]: NOTIFIER_SUBJECTS,
  [ORGANIZATION_WEBHOOKS_CONSUMER]: ORGANIZATION_WEBHOOKS_SUBJECTS,
  [EXPIRY_SCHEDULER_CONSUMER]: EXPIRY_SCHEDULER_SUBJECTS,
  [WORKFLOW_MANAGER_CONSUMER]: WORKFLOW_MANAGER_SUBJECTS,
  [SERVICE_ROUTES_SHIPMENTS_CONSUMER]: SERVICE_ROUTES_SHIPMENTS_SUBJECTS,
}
