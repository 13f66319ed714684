import type { Bus, BusLogger, ConsumerOptions } from '../infrastructure/bus/bus.js'
import { ShipmentEvents, type ShipmentCreated } from '../../schemas/events/shipments.js'
import type { GivenShipment } from '../workflows/start-workflow.js'
import type { Platform } from '../platform.js'
import type { CommandContext } from '../shared/command-handler.js'
import { evolve, initialState, shipmentStream, type ShipmentState } from '../shipments/shipment.js'
import {
  ignore, reactionOptions, relayedEvents, send, type Reaction, type ReactionInput, type ReactionOutput, type RelayedEvent, type StreamRead,
} from './reaction.js'
import { ReactionRunner } from './reaction-runner.js'
import { idOf } from '../../schemas/events/streams.js'
import { eventsOf, subjectsOf } from '../shared/event-subjects.js'

export const SERVICE_ROUTES_SHIPMENTS_CONSUMER = 'service-routes-shipments'
/** A shipment that is annulled (cancelled, or expired before it was ready) no longer needs its workflow. */
const SHIPMENT_EVENTS = eventsOf('shipment', 'ShipmentCreated', 'ShipmentCancelled', 'ShipmentExpired')
export const SERVICE_ROUTES_SHIPMENTS_SUBJECTS = subjectsOf('shipment', SHIPMENT_EVENTS)

/** The default blueprints of DESIGN §3.9 a shipment starts. */
export type ShipmentBlueprintKey = 'delivery' | 'pickup-delivery'

/** The key of a shipment's workflow start or cancel: the same on every repeat of one call. */
export const shipmentWorkflowKey = (shipmentId: number, verb: 'start' | 'cancel') => `shipment:${shipmentId}:${verb}-workflow`

/** What a workflow needs of its shipment, as the shipment's ShipmentCreated says it (no read model). */
export type ShipmentFacts = GivenShipment

/** The facts of a created shipment: its addresses, and its packages' totals as the shipments read model counts them. */
export function shipmentFacts(d: Pick<ShipmentCreated, 'origin' | 'destination' | 'packages'>): ShipmentFacts {
  let grams = 0; let cm3 = 0
  for (const p of d.packages) { grams += p.weight.value; cm3 += p.length.value * p.width.value * p.height.value }
  return { origin: d.origin, destination: d.destination, load: { grams: Math.round(grams), volume_cm3: Math.round(cm3), packages: d.packages.length } }
}

/** What the workflows port is told beside the usual context: the key that makes a repeated call a no-op. */
export interface WorkflowCallContext extends CommandContext {
  /** `shipment:<id>:start-workflow` or `shipment:<id>:cancel-workflow`: the same on every repeat of one call. */
  idempotencyKey: string
}

/**
 * The port this consumer drives, implemented by the workflows module (not on this branch yet).
 * Both run in the carrier organization and must be idempotent per `ctx.idempotencyKey`: the
 * consumer calls at most once per relayed event in the normal run, but a crash between the call
 * and the consumer's mark repeats it with the same key. Neither is called inside a database
 * transaction, so an implementation writes through `platform`.
 */
export interface ShipmentWorkflowsPort {
  startShipmentWorkflow(
    platform: Platform, carrierOrganizationId: string,
    input: { blueprint_key: ShipmentBlueprintKey; data: { shipment_id: number }; shipment: ShipmentFacts }, ctx: WorkflowCallContext,
  ): Promise<unknown>
  /** Cancels the shipment's workflow; one that does not exist or is already final is nothing to do. */
  cancelShipmentWorkflow(
    platform: Platform, carrierOrganizationId: string, input: { shipment_id: number }, ctx: WorkflowCallContext,
  ): Promise<unknown>
}

export interface ServiceRoutesShipmentsDeps {
  bus: Bus
  workflows: ShipmentWorkflowsPort
  logger?: BusLogger
}

/** The workflow a created shipment needs, or null when its carrier runs its own operations (`custom`). */
export function workflowOfCreated(d: Pick<ShipmentCreated, 'integration' | 'requires_pickup' | 'carrier'>): { carrierOrganizationId: string; blueprint_key: ShipmentBlueprintKey } | null {
  if (d.integration !== 'service_routes') return null
  return { carrierOrganizationId: d.carrier.id, blueprint_key: d.requires_pickup ? 'pickup-delivery' : 'delivery' }
}

type Input = RelayedEvent<typeof SHIPMENT_EVENTS>

/** The commands it sends, each through the workflows port with the key that makes a repeat a no-op. */
export type ServiceRoutesShipmentsCommand =
  | { type: 'StartShipmentWorkflow'; data: { carrier_organization_id: string; blueprint_key: ShipmentBlueprintKey; shipment_id: number; shipment: ShipmentFacts; key: string } }
  | { type: 'CancelShipmentWorkflow'; data: { carrier_organization_id: string; shipment_id: number; key: string } }

const shipmentIdOf = (e: Input): number => idOf.shipment(e.streamId)!

/** A start reads nothing (its event says it all); a cancel reads the shipment for its carrier and integration. */
function load(e: Input): StreamRead | null {
  return e.type === 'ShipmentCreated' ? null : { stream: shipmentStream(shipmentIdOf(e)) }
}

function decide({ message: e }: ReactionInput<Input>, state: ShipmentState): ReactionOutput<ServiceRoutesShipmentsCommand>[] {
  const shipmentId = shipmentIdOf(e)
  if (e.type === 'ShipmentCreated') {
    const workflow = workflowOfCreated(e.data)
    if (!workflow) return [ignore('the carrier runs its own operations (custom)')]
    return [send({
      type: 'StartShipmentWorkflow',
      data: {
        carrier_organization_id: workflow.carrierOrganizationId, blueprint_key: workflow.blueprint_key, shipment_id: shipmentId,
        shipment: shipmentFacts(e.data), key: shipmentWorkflowKey(shipmentId, 'start'),
      },
    })]
  }
  if (!state.exists || state.integration !== 'service_routes' || !state.carrierId) return [ignore('not a shipment of a service_routes carrier')]
  return [send({ type: 'CancelShipmentWorkflow', data: { carrier_organization_id: state.carrierId, shipment_id: shipmentId, key: shipmentWorkflowKey(shipmentId, 'cancel') } })]
}

/** The pure part, for its given/when/then specs: the shipment's own state and evolve. */
export const decider = { decide, evolve, initialState }

const OPTIONS: ConsumerOptions = reactionOptions(SERVICE_ROUTES_SHIPMENTS_CONSUMER, SERVICE_ROUTES_SHIPMENTS_SUBJECTS, { ordered: true })

/**
 * Shipments of `service_routes` carriers (DESIGN §3.9): a ShipmentCreated of such a shipment
 * starts the carrier organization's `pickup-delivery` (requires_pickup) or `delivery` blueprint
 * with the shipment id; its ShipmentCancelled (or ShipmentExpired) cancels that workflow.
 *
 * Everything comes from the events and the streams, never from a read model, which may lag the
 * bus: the carrier organization is the event's `carrier` (the organization the shipper named; a hub
 * carrier belongs to it), the integration, addresses and packages are in the ShipmentCreated, so a
 * start reads no shipment; a cancel reads the shipment's stream for its carrier, and the start's
 * reservation stream for the workflow it made.
 *
 * The port's calls are idempotent by key (`shipment:<id>:start-workflow`), so a redelivery repeats
 * reads and writes nothing. Ordered per shipment, so a cancel never overtakes its start. Events in
 * the log before its first start are skipped (consumer-start.ts), as for the notifier.
 */
export function serviceRoutesShipments(workflows: ShipmentWorkflowsPort): Reaction<Input, ShipmentState, typeof ShipmentEvents, ServiceRoutesShipmentsCommand> {
  return {
    options: OPTIONS,
    source: relayedEvents(SHIPMENT_EVENTS),
    history: ShipmentEvents,
    load,
    ...decider,
    handlers: {
      async StartShipmentWorkflow(platform, { data }, ctx, logger) {
        await workflows.startShipmentWorkflow(platform, data.carrier_organization_id, {
          blueprint_key: data.blueprint_key, data: { shipment_id: data.shipment_id }, shipment: data.shipment,
        }, { ...ctx, idempotencyKey: data.key })
        logger.info({ shipment_id: data.shipment_id, blueprint_key: data.blueprint_key }, 'service_routes shipment: workflow started')
      },
      async CancelShipmentWorkflow(platform, { data }, ctx, logger) {
        await workflows.cancelShipmentWorkflow(platform, data.carrier_organization_id, { shipment_id: data.shipment_id }, { ...ctx, idempotencyKey: data.key })
        logger.info({ shipment_id: data.shipment_id }, 'service_routes shipment annulled: workflow cancelled')
      },
    },
  }
}

/** The reaction run with its workflows port, as carrier-processes.ts and the tests start it. */
export class ServiceRoutesShipments extends ReactionRunner<Input, ShipmentState, typeof ShipmentEvents, ServiceRoutesShipmentsCommand> {
  static readonly options: ConsumerOptions = OPTIONS

  constructor(platform: Platform, deps: ServiceRoutesShipmentsDeps) {
    super(platform, deps.bus, serviceRoutesShipments(deps.workflows), deps.logger)
  }
}
