import { createHash } from 'node:crypto'
import type { CarrierStatus, RoutesStatus } from '../../schemas/events/shipments.js'
import { FailureReason } from '../../schemas/events/tasks.js'
import { handleCommand, type CommandContext } from '../shared/command-handler.js'
import { ErrorBag, IllegalStateError } from '../shared/errors.js'
import type { Platform } from '../platform.js'
import { SUBSTATUSES_OF } from './status-catalog.js'
import {
  annulled, FINAL_CARRIER_STATUSES, requireExisting, requireOpen, shipmentDeciderOf, shipmentStream,
  type ShipmentEvent, type ShipmentState,
} from './shipment.js'

/**
 * Slice "set a status from the routes operations" (DESIGN §3.9, shipments of `service_routes`
 * carriers): the platform runs such a carrier's deliveries itself, so its tasks' outcomes become
 * the shipment's statuses. No HTTP route: the process manager's `set_shipment_status` action
 * calls `setShipmentStatusFromRoutes`.
 *
 * It appends the same `StatusReported` a carrier's report appends (the platform acts as the
 * carrier here), marked `source: "routes"`, so every reader (read model, tracking, `as_of`, the
 * carrier's view) takes it as any other status, and the aggregate's rules hold: nothing after a
 * final state, nothing on a cancelled or expired shipment, no `delivered` during a return.
 */

/** Routes-API statuses the routes operations may set, and the carrier-side status each stands for (DESIGN §3.5, read backwards). */
export const ROUTES_SETTABLE_STATUSES = {
  picked_up: 'received',
  out_for_delivery: 'out_for_delivery',
  attempted_delivery: 'failed_delivery',
  delivered: 'delivered',
  not_delivered: 'not_delivered',
  returned: 'returned',
} as const satisfies Partial<Record<RoutesStatus, CarrierStatus>>
export type RoutesSettableStatus = keyof typeof ROUTES_SETTABLE_STATUSES

/** The delivery task's failure reasons (one definition: the task events' schema). */
export const TASK_FAILURE_REASONS: readonly string[] = FailureReason.anyOf.map((l) => l.const)
export const SIGNED_BY_MAX = 255

export type SetRoutesStatus = {
  type: 'SetRoutesStatus'
  data: {
    status: string
    substatus: string | null
    /** The failed task's reason (attempted_delivery, not_delivered). */
    reason?: string | null | undefined
    /** Who signed for the parcel (delivered). */
    signed_by?: string | null | undefined
    /** When it happened (the task's completion); absent → `set_at`. */
    occurred_at?: string | null | undefined
    /** The server clock at the call. */
    set_at: string
    /** The caller's idempotency key: a status already set with this key is not set again. */
    key?: string | null | undefined
  }
}

const isSettable = (s: string): s is RoutesSettableStatus => Object.hasOwn(ROUTES_SETTABLE_STATUSES, s)

/**
 * A key seen before → nothing (before any rule: a repeat after the status made the shipment final
 * is still a no-op, not a refusal). Then: only a `service_routes` shipment (409
 * `carrier_not_service_routes`); 422 naming every bad field; the aggregate's 409s. The substatus
 * is the one given, else the reason when it is a catalog substatus of the status (a failed
 * delivery's `no_answer` …), else none.
 */
export function decide(command: SetRoutesStatus, state: ShipmentState): ShipmentEvent[] {
  requireExisting(state)
  const d = command.data
  const key = d.key == null || d.key === '' ? null : d.key
  if (key !== null && state.routesKeys.includes(key)) return []
  if (state.integration !== 'service_routes') {
    throw new IllegalStateError('Only a shipment of a service_routes carrier takes its statuses from the routes operations; this carrier reports its own.', 'carrier_not_service_routes')
  }
  const bag = new ErrorBag()
  const status = isSettable(d.status) ? d.status : null
  if (!status) bag.add('status', `The routes operations cannot set this status; expected one of ${Object.keys(ROUTES_SETTABLE_STATUSES).join(', ')}.`)
  const reason = d.reason == null || d.reason === '' ? null : d.reason
  if (reason !== null && !TASK_FAILURE_REASONS.includes(reason)) bag.add('reason', `The selected reason is invalid; expected one of ${TASK_FAILURE_REASONS.join(', ')}.`)
  const allowed = status ? SUBSTATUSES_OF[status] ?? [] : []
  let substatus = d.substatus == null || d.substatus === '' ? null : d.substatus
  if (substatus !== null && status && !allowed.includes(substatus)) bag.add('substatus', `"${substatus}" is not a substatus of ${status}.`)
  if (substatus === null && reason !== null && allowed.includes(reason)) substatus = reason
  const signedBy = d.signed_by == null ? null : d.signed_by.trim() || null
  if (signedBy !== null && status && status !== 'delivered') bag.add('signed_by', 'A signature is only recorded with status delivered.')
  if (signedBy !== null && [...signedBy].length > SIGNED_BY_MAX) bag.add('signed_by', `The signed by may not be greater than ${SIGNED_BY_MAX} characters.`)
  const occurredRaw = d.occurred_at == null || d.occurred_at === '' ? d.set_at : d.occurred_at
  const occurred = Date.parse(occurredRaw)
  if (Number.isNaN(occurred)) bag.add('occurred_at', 'The occurred at is not a valid date-time.')
  bag.throwIfAny()
  if (annulled(state)) requireOpen(state, 'take a status from its route')
  if (state.outcome) throw new IllegalStateError(`The shipment is final (${state.outcome}); its status cannot change.`, 'shipment_final')
  if (status === 'delivered' && state.inReturn) {
    throw new IllegalStateError('The shipment is being returned to the sender; delivered is no longer accepted.', 'shipment_in_return')
  }
  const carrierStatus = ROUTES_SETTABLE_STATUSES[status!]
  return [{
    type: 'StatusReported',
    data: {
      status: carrierStatus, reason, message: null, occurred_at: new Date(occurred).toISOString(), reported_at: d.set_at,
      routes_status: status!, substatus,
      // A failed task starts no return here: the blueprint says what comes next (a retry, then not_delivered).
      in_return: state.inReturn,
      final: FINAL_CARRIER_STATUSES.includes(carrierStatus),
      source: 'routes', signed_by: signedBy, key,
    },
  }]
}

export const decider = shipmentDeciderOf(decide)

/**
 * The event id of a keyed status: a UUID drawn from the shipment and the key (name-based, as
 * UUID v5 but over SHA-256), so two racing calls with one key write at most one event (the store
 * stores an event id once) besides the decider's check of the keys already applied.
 */
export function routesStatusEventId(shipmentId: number, key: string): string {
  const h = createHash('sha256').update(`shipment-routes-status\u0000${shipmentId}\u0000${key}`).digest()
  h[6] = (h[6]! & 0x0f) | 0x50
  h[8] = (h[8]! & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`
}

export interface RoutesStatusDetails {
  signed_by?: string | null
  reason?: string | null
  /** When it happened (e.g. the task's `completed_at`); default: the context's clock. */
  occurred_at?: string | null
  /** Idempotency key, e.g. the process manager's `workflow:<id>:step:<key>:attempt:<n>:action:<i>`. */
  key?: string | null
}

export interface RoutesStatusResult {
  /** False when nothing was appended (a key already applied). */
  changed: boolean
  status: RoutesStatus
  substatus: string | null
}

/**
 * Sets a `service_routes` shipment's status through its own decider (see decide).
 * Throws the decider's domain errors: NotFoundError, ValidationError (422 fields), IllegalStateError
 * (`carrier_not_service_routes`, `shipment_final`, `shipment_cancelled`, `shipment_expired`,
 * `shipment_in_return`). Waits for the read model like any command, so a GET afterwards shows it.
 */
export async function setShipmentStatusFromRoutes(
  platform: Pick<Platform, 'commands'>, shipmentId: number, status: string, substatus: string | null, ctx: CommandContext,
  details: RoutesStatusDetails = {},
): Promise<RoutesStatusResult> {
  const key = details.key ?? null
  const { state, events } = await handleCommand(platform.commands, shipmentStream(shipmentId), decider, {
    type: 'SetRoutesStatus',
    data: {
      status, substatus, reason: details.reason ?? null, signed_by: details.signed_by ?? null,
      occurred_at: details.occurred_at ?? null, set_at: ctx.now.toISOString(), key,
    },
  }, ctx, key === null ? {} : { eventId: () => routesStatusEventId(shipmentId, key) })
  return { changed: events.length > 0, status: state.routesStatus, substatus: state.substatus }
}
