import { CarrierShipmentParams, ReportStatusBody } from '../../schemas/api/carriers.js'
import type { CarrierStatus } from '../../schemas/events/shipments.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import { carrierCommandResponses, runCarrierCommand, type ByCarrier } from './carrier-command.js'
import {
  annulled, CARRIER_STATUSES, FAILED_DELIVERY_REASONS, FINAL_CARRIER_STATUSES, MESSAGE_MAX, OCCURRED_AT_FUTURE_TOLERANCE_MS,
  requireCarrierShipment, requireOpen, RETURN_REASONS, routesStatusOf, shipmentDeciderOf, type ShipmentEvent, type ShipmentState,
} from './shipment.js'
import type { RoutesPlugin } from '../http/module.js'
import { carrierIdOf } from '../http/plugins/auth.js'

/** Slice "report a carrier status": the carrier's `POST /shipments/{id}/status`. */

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
  } & ByCarrier
}

/**
 * Every rule of the spec's carrier-side transitions and of `POST /shipments/{id}/status`:
 * 422 (all field errors at once) for an unknown status, a missing/wrong reason, a message over
 * 150 characters, an `occurred_at` that is not a date, earlier than the shipment's creation or
 * ahead of the clock; then 409 when the shipment is annulled, not documented, final, or
 * `delivered` is reported after a return began. A report identical to the last one appends
 * nothing (carrier retries are idempotent).
 */
const isCarrierStatus = (s: string): s is CarrierStatus => CARRIER_STATUSES.some((c) => c === s)

export function decide(command: ReportCarrierStatus, state: ShipmentState): ShipmentEvent[] {
  requireCarrierShipment(state, command.data.carrier_id)
  const d = command.data
  const bag = new ErrorBag()
  const status = isCarrierStatus(d.status) ? d.status : null
  if (!status) bag.add('status', `The selected status is invalid; expected one of ${CARRIER_STATUSES.join(', ')}.`)
  const reason = d.reason == null || d.reason === '' ? null : d.reason
  if (status === 'failed_delivery') {
    if (reason === null) bag.add('reason', 'The reason field is required when status is failed_delivery.')
    else if (!FAILED_DELIVERY_REASONS.some((r) => r === reason)) {
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
    throw new IllegalStateError('The shipment is not documented yet: upload the label first.', 'shipment_not_documented')
  }
  const occurredAt = new Date(occurred).toISOString()
  const last = state.lastReport
  if (last && last.status === status && last.reason === reason && last.message === message && last.occurred_at === occurredAt) return []
  if (state.outcome) throw new IllegalStateError(`The shipment is final (${state.outcome}); its status cannot change.`, 'shipment_final')
  if (status === 'delivered' && state.inReturn) {
    throw new IllegalStateError('The shipment is being returned to the sender; delivered is no longer accepted.', 'shipment_in_return')
  }
  // The bag above refused a status not in CARRIER_STATUSES.
  if (status === null) throw new Error('a report with no valid status passed validation')
  const s = status
  const inReturn = state.inReturn || (s === 'failed_delivery' && reason !== null && RETURN_REASONS.includes(reason))
  return [{
    type: 'StatusReported',
    data: {
      status: s, reason, message, occurred_at: occurredAt, reported_at: d.reported_at,
      ...routesStatusOf(s, reason), in_return: inReturn, final: FINAL_CARRIER_STATUSES.includes(s),
    },
  }]
}

export const decider = shipmentDeciderOf(decide)

export const reportCarrierStatusRoutes: RoutesPlugin = async (app, { platform }) => {
  app.post('/shipments/:shipment_id/status', {
    schema: { tags: ['carrier API'], summary: 'Report a standardized status (409 before the label, after a final status, or delivered during a return)', params: CarrierShipmentParams, body: ReportStatusBody, response: carrierCommandResponses },
  }, async (req) => {
    const body = req.body
    return runCarrierCommand(platform, req, req.params.shipment_id, decider, {
      type: 'ReportCarrierStatus',
      data: {
        status: body.status, reason: body.reason ?? null, message: body.message ?? null, occurred_at: body.occurred_at ?? null,
        reported_at: platform.clock().toISOString(), carrier_id: carrierIdOf(req),
      },
    })
  })
}
