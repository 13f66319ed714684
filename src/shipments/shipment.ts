import {
  ShipmentEvents, type BlobRef, type CarrierStatus, type StatusReported, type Integration, type RoutesStatus,
} from '../../schemas/events/shipments.js'
import type { EventOf } from '../../schemas/events/event-map.js'
import type { Decider } from '../shared/decider.js'
import { IllegalStateError, NotFoundError } from '../shared/errors.js'
import { stream } from '../../schemas/events/streams.js'

/**
 * The shipment aggregate: its events, state, `evolve` and the rules every command shares. Each
 * command is a slice with its decider and its route: create-shipment.ts, cancel-shipment.ts,
 * mark-ready.ts, upload-documents.ts, set-tracking.ts, report-carrier-status.ts,
 * expire-shipment.ts, label.ts (PrintLabel), attachments.ts (AddAttachment) and routes-status.ts
 * (SetRoutesStatus: the platform's own operations move a `service_routes` shipment).
 *
 * Stream `shipment-<id>` (id = the int64 from the shipments sequence).
 *
 * Carrier-side phases (spec "Carrier-side shipment"):
 *   processing ──documents──► pending_preparation ──ready──► ready_to_ship ──first status──► in_carrier_hands
 * A `service_routes` shipment is born in pending_preparation: the platform makes its label, so
 * it is documented from the start and the shipper's `POST /shipments/{id}/ready` is all it needs.
 * Closed outcomes: delivered / not_delivered / returned (reported, final), cancelled (shipper or
 * carrier annuls it) and expired (not ready within SHIPMENT_EXPIRY_HOURS).
 *
 * Cancel rule (the spec leaves it open): allowed while the shipment is open and not yet in the
 * carrier's hands, i.e. before the carrier reported its first status (`received` or later) — as
 * the large platforms do (a label is voidable until the parcel is scanned in). Afterwards the
 * parcel physically travels, so the answer is 409 and the carrier must report `returned` instead.
 */

export type ShipmentEvent = EventOf<typeof ShipmentEvents>

export const shipmentStream = stream.shipment
export const controlNumberStream = stream.controlNumber

export type CarrierPhase = 'processing' | 'pending_preparation' | 'ready_to_ship' | 'in_carrier_hands'
export type Outcome = 'delivered' | 'not_delivered' | 'returned' | 'cancelled' | 'expired'

export const CARRIER_STATUSES = ['received', 'out_for_delivery', 'soon_deliver', 'delivered', 'failed_delivery', 'not_delivered', 'returned'] as const satisfies readonly CarrierStatus[]
export const FINAL_CARRIER_STATUSES: readonly CarrierStatus[] = ['delivered', 'not_delivered', 'returned']
export const FAILED_DELIVERY_REASONS = ['receiver_absent', 'bad_address', 'rejected', 'dangerous_area'] as const
/** Failed-delivery reasons that turn the parcel back to the sender. */
export const RETURN_REASONS: readonly string[] = ['rejected', 'dangerous_area']
export const MESSAGE_MAX = 150
/** A report may be stamped slightly ahead of our clock (carrier clock skew), not more. */
export const OCCURRED_AT_FUTURE_TOLERANCE_MS = 5 * 60_000

export interface ShipmentState {
  exists: boolean
  id: number | null
  shipperId: string | null
  carrierId: string | null
  /** The carrier-hub carrier (`car_…`) of its service type: the carrier API's caller must be it. */
  carrierHubId: string | null
  integration: Integration
  createdAt: string | null
  phase: CarrierPhase
  outcome: Outcome | null
  documented: boolean
  /** Documents uploaded by the carrier (null for platform-made labels). */
  documents: { label: BlobRef; label_zpl: BlobRef | null; waybill: BlobRef | null } | null
  inReturn: boolean
  lastReport: StatusReported | null
  routesStatus: RoutesStatus
  substatus: string | null
  tracking: { number: string; url: string | null } | null
  labelPrintedAt: string | null
  readyAt: string | null
  attachments: number
  /** Idempotency keys of the statuses the routes operations set (src/shipments/routes-status.ts). */
  routesKeys: readonly string[]
}

export const initialState = (): ShipmentState => ({
  exists: false, id: null, shipperId: null, carrierId: null, carrierHubId: null, integration: 'custom', createdAt: null,
  phase: 'processing', outcome: null, documented: false, documents: null, inReturn: false, lastReport: null,
  routesStatus: 'pending', substatus: 'processing', tracking: null, labelPrintedAt: null, readyAt: null, attachments: 0,
  routesKeys: [],
})

/** Routes-API status of a carrier-side phase before the carrier has it (DESIGN §3.5). */
export const PHASE_SUBSTATUS: Record<Exclude<CarrierPhase, 'in_carrier_hands'>, string> = {
  processing: 'processing', pending_preparation: 'pending_preparation', ready_to_ship: 'ready_to_ship',
}

/** DESIGN §3.5: a reported carrier status → the routes-API status and substatus. */
export function routesStatusOf(status: CarrierStatus, reason: string | null): { routes_status: RoutesStatus; substatus: string | null } {
  switch (status) {
    case 'received': return { routes_status: 'picked_up', substatus: null }
    case 'out_for_delivery': return { routes_status: 'out_for_delivery', substatus: null }
    case 'soon_deliver': return { routes_status: 'out_for_delivery', substatus: 'soon_deliver' }
    case 'failed_delivery': return { routes_status: 'attempted_delivery', substatus: reason }
    case 'delivered': return { routes_status: 'delivered', substatus: null }
    case 'not_delivered': return { routes_status: 'not_delivered', substatus: reason ?? 'lost' }
    case 'returned': return { routes_status: 'returned', substatus: null }
  }
}

export function evolve(state: ShipmentState, event: ShipmentEvent): ShipmentState {
  switch (event.type) {
    case 'ShipmentCreated': {
      const d = event.data
      const phase: CarrierPhase = d.integration === 'service_routes' ? 'pending_preparation' : 'processing'
      return {
        ...state, exists: true, id: d.id, shipperId: d.shipper.id, carrierId: d.carrier.id, carrierHubId: d.service_type?.carrier_hub_id ?? null,
        integration: d.integration,
        createdAt: d.created_at, phase, documented: d.integration === 'service_routes',
        routesStatus: 'pending', substatus: PHASE_SUBSTATUS[phase],
      }
    }
    case 'LabelUploaded': {
      const phase = state.phase === 'processing' ? 'pending_preparation' : state.phase
      const d = event.data
      return {
        ...state, documented: true, phase, documents: { label: d.label, label_zpl: d.label_zpl, waybill: d.waybill },
        substatus: phase === 'in_carrier_hands' ? state.substatus : PHASE_SUBSTATUS[phase],
      }
    }
    case 'ShipmentReady':
      return { ...state, phase: 'ready_to_ship', readyAt: event.data.ready_at, substatus: PHASE_SUBSTATUS.ready_to_ship }
    case 'StatusReported': {
      const d = event.data
      const outcome = d.final ? (d.status as Outcome) : state.outcome
      return {
        ...state, phase: 'in_carrier_hands', lastReport: d, inReturn: d.in_return, outcome,
        routesStatus: d.routes_status, substatus: d.substatus,
        routesKeys: d.key ? [...state.routesKeys, d.key] : state.routesKeys,
      }
    }
    case 'ShipmentCancelled':
      return { ...state, outcome: 'cancelled', routesStatus: 'cancelled', substatus: null }
    case 'ShipmentExpired':
      return { ...state, outcome: 'expired', routesStatus: 'cancelled', substatus: 'expired' }
    case 'TrackingNumberSet':
      return { ...state, tracking: { number: event.data.tracking_number, url: event.data.tracking_url } }
    case 'LabelPrinted':
      return state.labelPrintedAt ? state : { ...state, labelPrintedAt: event.data.printed_at }
    case 'AttachmentAdded':
      return { ...state, attachments: state.attachments + 1 }
    default:
      return state
  }
}

// ── Rules the commands share ──────────────────────────────────────────────────────────────

export const requireExisting = (state: ShipmentState): void => {
  if (!state.exists) throw new NotFoundError('Shipment')
}

/** The carrier API acts for one carrier; another carrier's shipment is as unknown as a missing one. */
export const requireCarrierShipment = (state: ShipmentState, carrierHubId: string | undefined): void => {
  requireExisting(state)
  if (carrierHubId !== undefined && state.carrierHubId !== carrierHubId) throw new NotFoundError('Shipment')
}

/** The routes API acts for the shipper or the carrier of the shipment; anyone else gets not found. */
export const requireParty = (state: ShipmentState, organizationId: string | undefined): void => {
  requireExisting(state)
  if (organizationId !== undefined && state.shipperId !== organizationId && state.carrierId !== organizationId) throw new NotFoundError('Shipment')
}

export const annulled = (state: ShipmentState): boolean => state.outcome === 'cancelled' || state.outcome === 'expired'

export const requireOpen = (state: ShipmentState, action: string): void => {
  if (state.outcome === 'cancelled') throw new IllegalStateError(`The shipment is cancelled; cannot ${action}.`, 'shipment_cancelled')
  if (state.outcome === 'expired') throw new IllegalStateError(`The shipment expired; cannot ${action}.`, 'shipment_expired')
  if (state.outcome) throw new IllegalStateError(`The shipment is final (${state.outcome}); cannot ${action}.`, 'shipment_final')
}

/** A slice's decider: its own `decide` over the aggregate's state and `evolve`. */
export const shipmentDeciderOf = <Command>(decide: (command: Command, state: ShipmentState) => ShipmentEvent[]): Decider<ShipmentState, Command, ShipmentEvent> =>
  ({ initialState, evolve, decide })

/** Fold a stream's events (e.g. from `store.readStream`) into the state. */
export const foldShipment = (events: readonly { type: string; data: unknown }[]): ShipmentState =>
  events.reduce((s, e) => evolve(s, e as ShipmentEvent), initialState())
