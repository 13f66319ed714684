import type { Bus, BusLogger } from '../infrastructure/bus/bus.js'
import type { Platform } from '../platform.js'
import type { Timers } from './timers.js'
import { Notifier } from './notifier.js'
import { ShipmentExpiry } from './shipment-expiry.js'
import { WorkflowManager, type ShipmentStatusPort } from './workflow-manager.js'
import { ServiceRoutesShipments, type ShipmentWorkflowsPort } from './service-routes-shipments.js'
import { shipmentStatuses, shipmentWorkflows } from './shipment-ports.js'
import { routeLifecycle } from './route-lifecycle.js'
import { ReactionRunner, type RunningReaction } from './reaction-runner.js'

export interface ReactionDeps {
  bus: Bus
  timers: Timers
  logger: BusLogger
  /** set_shipment_status of workflows; default: through the shipment's decider (shipment-ports.ts). */
  shipments?: ShipmentStatusPort | undefined
  /** Workflows of service_routes shipments; default: the workflows module (shipment-ports.ts). */
  shipmentWorkflows?: ShipmentWorkflowsPort | undefined
}

/**
 * The reactions of an API process, all on the bus: the notifier's intake consumer plus its webhook
 * dispatcher, the shipment expiry (timer scheduling and the expire command), the workflows'
 * process manager, the workflows of service_routes shipments, and routes' life cycle.
 * Safe to run in every process: durable consumers are shared by name, the intake and scheduling are
 * idempotent per message, and outbox rows and timers are claimed with SKIP LOCKED.
 */
export async function startCarrierProcesses(
  platform: Platform, deps: ReactionDeps,
): Promise<{ notifier: Notifier; expiry: ShipmentExpiry; workflows: WorkflowManager; serviceRoutes: ServiceRoutesShipments; routes: RunningReaction; stop(): Promise<void> }> {
  const notifier = new Notifier(platform, { bus: deps.bus, logger: deps.logger })
  const expiry = new ShipmentExpiry(platform, deps)
  const workflows = new WorkflowManager(platform, { bus: deps.bus, logger: deps.logger, shipments: deps.shipments ?? shipmentStatuses })
  const serviceRoutes = new ServiceRoutesShipments(platform, { bus: deps.bus, logger: deps.logger, workflows: deps.shipmentWorkflows ?? shipmentWorkflows })
  await notifier.start()
  await expiry.start()
  await workflows.start()
  const routes = new ReactionRunner(platform, deps.bus, routeLifecycle, deps.logger)
  await serviceRoutes.start()
  await routes.start()
  return {
    notifier, expiry, workflows, serviceRoutes, routes,
    async stop() { await Promise.all([notifier.stop(), expiry.stop(), workflows.stop(), serviceRoutes.stop(), routes.stop()]) },
  }
}
