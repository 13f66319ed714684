import type {
  AttachmentAdded, BlobRef, CarrierStatus, CarrierStatusReported, Integration, LabelPrinted, RoutesStatus, ShipmentCancelled,
  ShipmentCreated, ShipmentDocumented, ShipmentExpired, ShipmentReady, TrackingNumberSet,
} from '../../schemas/events/shipments.js'
import type { Decider } from '../shared/decider.js'
import { AppError, ConflictError, ErrorBag, NotFoundError } from '../shared/errors.js'

/**
 * The shipment aggregate: stream `shipment-<id>` (id = the int64 from the shipments sequence).
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

export type ShipmentEvent =
  | { type: 'ShipmentCreated'; data: ShipmentCreated }
  | { type: 'ShipmentCancelled'; data: ShipmentCancelled }
  | { type: 'ShipmentDocumented'; data: ShipmentDocumented }
  | { type: 'TrackingNumberSet'; data: TrackingNumberSet }
  | { type: 'ShipmentReady'; data: ShipmentReady }
  | { type: 'CarrierStatusReported'; data: CarrierStatusReported }
  | { type: 'ShipmentExpired'; data: ShipmentExpired }
  | { type: 'LabelPrinted'; data: LabelPrinted }
  | { type: 'AttachmentAdded'; data: AttachmentAdded }

export const shipmentEventTypes = [
  'ShipmentCreated', 'ShipmentCancelled', 'ShipmentDocumented', 'TrackingNumberSet', 'ShipmentReady',
  'CarrierStatusReported', 'ShipmentExpired', 'LabelPrinted', 'AttachmentAdded',
] as const satisfies readonly ShipmentEvent['type'][]

export const shipmentStream = (id: number | string): string => `shipment-${id}`
export const controlNumberStream = (carrierOrgId: string, code: string): string => `control-number-${carrierOrgId}-${code}`

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
  integration: Integration
  createdAt: string | null
  phase: CarrierPhase
  outcome: Outcome | null
  documented: boolean
  /** Documents uploaded by the carrier (null for platform-made labels). */
  documents: { label: BlobRef; label_zpl: BlobRef | null; waybill: BlobRef | null } | null
  inReturn: boolean
  lastReport: CarrierStatusReported | null
  routesStatus: RoutesStatus
  substatus: string | null
  tracking: { number: string; url: string | null } | null
  labelPrintedAt: string | null
  readyAt: string | null
  attachments: number
}

export const initialShipmentState = (): ShipmentState => ({
  exists: false, id: null, shipperId: null, carrierId: null, integration: 'custom', createdAt: null,
  phase: 'processing', outcome: null, documented: false, documents: null, inReturn: false, lastReport: null,
  routesStatus: 'pending', substatus: 'processing', tracking: null, labelPrintedAt: null, readyAt: null, attachments: 0,
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

export function evolveShipment(state: ShipmentState, event: ShipmentEvent): ShipmentState {
  switch (event.type) {
    case 'ShipmentCreated': {
      const d = event.data
      const phase: CarrierPhase = d.integration === 'service_routes' ? 'pending_preparation' : 'processing'
      return {
        ...state, exists: true, id: d.id, shipperId: d.shipper.id, carrierId: d.carrier.id, integration: d.integration,
        createdAt: d.created_at, phase, documented: d.integration === 'service_routes',
        routesStatus: 'pending', substatus: PHASE_SUBSTATUS[phase],
      }
    }
    case 'ShipmentDocumented': {
      const phase = state.phase === 'processing' ? 'pending_preparation' : state.phase
      const d = event.data
      return {
        ...state, documented: true, phase, documents: { label: d.label, label_zpl: d.label_zpl, waybill: d.waybill },
        substatus: phase === 'in_carrier_hands' ? state.substatus : PHASE_SUBSTATUS[phase],
      }
    }
    case 'ShipmentReady':
      return { ...state, phase: 'ready_to_ship', readyAt: event.data.ready_at, substatus: PHASE_SUBSTATUS.ready_to_ship }
    case 'CarrierStatusReported': {
      const d = event.data
      const outcome = d.final ? (d.status as Outcome) : state.outcome
      return {
        ...state, phase: 'in_carrier_hands', lastReport: d, inReturn: d.in_return, outcome,
        routesStatus: d.routes_status, substatus: d.substatus,
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

// ── Commands ────────────────────────────────────────────────────────────────────────────────

export type CreateShipment = { type: 'CreateShipment'; data: ShipmentCreated }
export type CancelShipment = { type: 'CancelShipment'; data: { cancelled_at: string; reason?: string | null } }
export type UploadDocuments = {
  type: 'UploadDocuments'
  data: { label: BlobRef; label_zpl?: BlobRef | null; waybill?: BlobRef | null; documented_at: string }
}
export type SetTracking = { type: 'SetTracking'; data: { tracking_number: string; tracking_url?: string | null; set_at: string } }
export type MarkReady = { type: 'MarkReady'; data: { ready_at: string } }
export type ReportCarrierStatus = {
  type: 'ReportCarrierStatus'
  data: {
    status: string
    reason?: string | null | undefined
    message?: string | null | undefined
    /** ISO date-time; absent → `reported_at`. */
    occurred_at?: string | null | undefined
    /** The server clock at the report. */
    reported_at: string
  }
}
export type ExpireShipment = { type: 'ExpireShipment'; data: { now: string; expiry_hours: number } }
export type PrintLabel = { type: 'PrintLabel'; data: { printed_at: string; format: 'pdf' | 'zpl'; source: 'carrier' | 'platform' } }
export type AddAttachment = { type: 'AddAttachment'; data: AttachmentAdded }

export type ShipmentCommand =
  | CreateShipment | CancelShipment | UploadDocuments | SetTracking | MarkReady | ReportCarrierStatus
  | ExpireShipment | PrintLabel | AddAttachment

const requireExisting = (state: ShipmentState): void => {
  if (!state.exists) throw new NotFoundError('Shipment')
}

const annulled = (state: ShipmentState): boolean => state.outcome === 'cancelled' || state.outcome === 'expired'

const requireOpen = (state: ShipmentState, action: string): void => {
  if (state.outcome === 'cancelled') throw new ConflictError(`The shipment is cancelled; cannot ${action}.`, 'shipment_cancelled')
  if (state.outcome === 'expired') throw new ConflictError(`The shipment expired; cannot ${action}.`, 'shipment_expired')
  if (state.outcome) throw new ConflictError(`The shipment is final (${state.outcome}); cannot ${action}.`, 'shipment_final')
}

export function decideCreate(command: CreateShipment, state: ShipmentState): ShipmentEvent[] {
  if (state.exists) throw new ConflictError('The shipment already exists.', 'shipment_exists')
  return [{ type: 'ShipmentCreated', data: command.data }]
}

export function decideCancel(command: CancelShipment, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  requireOpen(state, 'cancel it')
  if (state.phase === 'in_carrier_hands') {
    throw new ConflictError('The shipment is already in the carrier\'s hands and can no longer be cancelled.', 'shipment_in_transit')
  }
  return [{ type: 'ShipmentCancelled', data: { cancelled_at: command.data.cancelled_at, reason: command.data.reason ?? null } }]
}

/**
 * Processing → Pending preparation. A replacement upload is accepted until the parcel is in the
 * carrier's hands (labels get corrected); afterwards, or once annulled/final, it is a 409.
 */
export function decideUploadDocuments(command: UploadDocuments, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  requireOpen(state, 'upload documents')
  if (state.phase === 'in_carrier_hands') {
    throw new ConflictError('The shipment is already in the carrier\'s hands; its documents can no longer change.', 'shipment_in_transit')
  }
  const d = command.data
  return [{ type: 'ShipmentDocumented', data: { label: d.label, label_zpl: d.label_zpl ?? null, waybill: d.waybill ?? null, documented_at: d.documented_at } }]
}

/** Sets or changes the tracking number; the same number and URL again appends nothing. Refused once annulled. */
export function decideSetTracking(command: SetTracking, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  if (annulled(state)) requireOpen(state, 'set its tracking')
  const number = command.data.tracking_number.trim()
  const url = command.data.tracking_url ?? null
  const bag = new ErrorBag()
  if (!number) bag.add('tracking_number', 'The tracking number is required.')
  if (number.length > 100) bag.add('tracking_number', 'The tracking number may not be greater than 100 characters.')
  if (url !== null && url.length > 2048) bag.add('tracking_url', 'The tracking url may not be greater than 2048 characters.')
  bag.throwIfAny()
  if (state.tracking && state.tracking.number === number && state.tracking.url === url) return []
  return [{ type: 'TrackingNumberSet', data: { tracking_number: number, tracking_url: url, set_at: command.data.set_at } }]
}

/**
 * The shipper's `POST /shipments/{id}/ready`: Pending preparation → Ready to ship. Before the
 * carrier uploaded the label (custom integration, Processing) it is a 409; when already ready it
 * appends nothing (a repeated click is harmless).
 */
export function decideMarkReady(command: MarkReady, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  requireOpen(state, 'mark it ready')
  if (state.phase === 'ready_to_ship') return []
  if (state.phase === 'in_carrier_hands') throw new ConflictError('The shipment is already in the carrier\'s hands.', 'shipment_in_transit')
  if (state.phase === 'processing') {
    throw new ConflictError('The carrier has not uploaded the label yet; the shipment cannot be ready.', 'shipment_not_documented')
  }
  return [{ type: 'ShipmentReady', data: { ready_at: command.data.ready_at } }]
}

/**
 * Every rule of the spec's carrier-side transitions and of `POST /shipments/{id}/status`:
 * 422 (all field errors at once) for an unknown status, a missing/wrong reason, a message over
 * 150 characters, an `occurred_at` that is not a date, earlier than the shipment's creation or
 * ahead of the clock; then 409 when the shipment is annulled, not documented, final, or
 * `delivered` is reported after a return began. A report identical to the last one appends
 * nothing (carrier retries are idempotent).
 */
export function decideReportCarrierStatus(command: ReportCarrierStatus, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  const d = command.data
  const bag = new ErrorBag()
  const status = (CARRIER_STATUSES as readonly string[]).includes(d.status) ? (d.status as CarrierStatus) : null
  if (!status) bag.add('status', `The selected status is invalid; expected one of ${CARRIER_STATUSES.join(', ')}.`)
  const reason = d.reason == null || d.reason === '' ? null : d.reason
  if (status === 'failed_delivery') {
    if (reason === null) bag.add('reason', 'The reason field is required when status is failed_delivery.')
    else if (!(FAILED_DELIVERY_REASONS as readonly string[]).includes(reason)) {
      bag.add('reason', `The selected reason is invalid; expected one of ${FAILED_DELIVERY_REASONS.join(', ')}.`)
    }
  } else if (status === 'not_delivered') {
    if (reason !== 'lost') bag.add('reason', 'The reason must be lost when status is not_delivered.')
  } else if (status && reason !== null) {
    bag.add('reason', 'A reason is only accepted with status failed_delivery or not_delivered.')
  }
  const message = d.message == null ? null : d.message
  if (message !== null && [...message].length > MESSAGE_MAX) bag.add('message', `The message may not be greater than ${MESSAGE_MAX} characters.`)
  const occurredRaw = d.occurred_at == null || d.occurred_at === '' ? d.reported_at : d.occurred_at
  const occurred = Date.parse(occurredRaw)
  if (Number.isNaN(occurred)) bag.add('occurred_at', 'The occurred at is not a valid date-time.')
  else {
    if (state.createdAt && occurred < Date.parse(state.createdAt)) {
      bag.add('occurred_at', 'The occurred at must not be earlier than the shipment\'s creation.')
    }
    if (occurred > Date.parse(d.reported_at) + OCCURRED_AT_FUTURE_TOLERANCE_MS) {
      bag.add('occurred_at', 'The occurred at must not be in the future.')
    }
  }
  bag.throwIfAny()
  if (annulled(state)) requireOpen(state, 'report a status')
  if (!state.documented) {
    throw new ConflictError('The shipment is not documented yet: upload the label first.', 'shipment_not_documented')
  }
  const occurredAt = new Date(occurred).toISOString()
  const last = state.lastReport
  if (last && last.status === status && last.reason === reason && last.message === message && last.occurred_at === occurredAt) return []
  if (state.outcome) throw new ConflictError(`The shipment is final (${state.outcome}); its status cannot change.`, 'shipment_final')
  if (status === 'delivered' && state.inReturn) {
    throw new ConflictError('The shipment is being returned to the sender; delivered is no longer accepted.', 'shipment_in_return')
  }
  const s = status as CarrierStatus
  const inReturn = state.inReturn || (s === 'failed_delivery' && reason !== null && RETURN_REASONS.includes(reason))
  return [{
    type: 'CarrierStatusReported',
    data: {
      status: s, reason, message, occurred_at: occurredAt, reported_at: d.reported_at,
      ...routesStatusOf(s, reason), in_return: inReturn, final: FINAL_CARRIER_STATUSES.includes(s),
    },
  }]
}

/**
 * Timer-driven (the process manager may fire late or twice): expires a shipment that is still
 * open and not ready `expiry_hours` after creation; in every other case it appends nothing.
 */
export function decideExpire(command: ExpireShipment, state: ShipmentState): ShipmentEvent[] {
  if (!state.exists || state.outcome || !state.createdAt) return []
  if (state.phase !== 'processing' && state.phase !== 'pending_preparation') return []
  const deadline = Date.parse(state.createdAt) + command.data.expiry_hours * 3_600_000
  if (Date.parse(command.data.now) < deadline) return []
  return [{ type: 'ShipmentExpired', data: { expired_at: command.data.now } }]
}

/** The first label retrieval stamps `label_printed_at`; later ones append nothing. */
export function decidePrintLabel(command: PrintLabel, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  if (state.labelPrintedAt) return []
  return [{ type: 'LabelPrinted', data: command.data }]
}

export function decideAddAttachment(command: AddAttachment, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  return [{ type: 'AttachmentAdded', data: command.data }]
}

export function decideShipment(command: ShipmentCommand, state: ShipmentState): ShipmentEvent[] {
  switch (command.type) {
    case 'CreateShipment': return decideCreate(command, state)
    case 'CancelShipment': return decideCancel(command, state)
    case 'UploadDocuments': return decideUploadDocuments(command, state)
    case 'SetTracking': return decideSetTracking(command, state)
    case 'MarkReady': return decideMarkReady(command, state)
    case 'ReportCarrierStatus': return decideReportCarrierStatus(command, state)
    case 'ExpireShipment': return decideExpire(command, state)
    case 'PrintLabel': return decidePrintLabel(command, state)
    case 'AddAttachment': return decideAddAttachment(command, state)
    default: throw new AppError(400, 'unknown_command', 'Unknown shipment command.')
  }
}

export const shipmentDecider: Decider<ShipmentState, ShipmentCommand, ShipmentEvent> = {
  initialState: initialShipmentState,
  evolve: evolveShipment,
  decide: decideShipment,
}

/** Fold a stream's events (e.g. from `store.readStream`) into the state. */
export const foldShipment = (events: readonly { type: string; data: unknown }[]): ShipmentState =>
  events.reduce((s, e) => evolveShipment(s, e as ShipmentEvent), initialShipmentState())
