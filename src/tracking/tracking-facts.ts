import type { Platform } from '../platform.js'
import { statusOverrides } from '../shipments/queries.js'
import type { Overrides } from '../shipments/status-catalog.js'
import { etaOf } from '../etas/eta-views.js'
import { POSITION_STALE_MS } from '../etas/eta-method.js'
import { newestPositions } from '../positions/positions-table.js'
import { iso, isoOrNull, json } from '../shared/rows.js'
import { organizationSettings } from '../organizations/settings.js'
import { lateByMinutes } from '../etas/lateness.js'
import type { TaskAttachmentItem } from '../../projections/tasks/tables.js'

/** A link stays valid until this long after the shipment's final status (DESIGN §3.10). */
export const AFTER_FINAL_MS = 30 * 24 * 3600_000

const OPEN = ['pending', 'started', 'arrived'] as const
/** Delivery tasks read per shipment: the newest, and the failed attempt its retries follow. */
const RECENT_TASKS = 5

/**
 * What the server knows of one tracked shipment, ids included (they never leave the server: the
 * public view is made of it by `trackingView`). The hub keeps the ids to know which change notices
 * concern it.
 */
export interface TrackingFacts {
  shipmentId: number
  carrierId: string
  carrierName: string
  organizationLocale: string | null
  status: string
  substatus: string | null
  final: boolean
  /** Epoch ms after which the link shows nothing; null while not final. */
  closesAt: number | null
  promisedDeliveryAt: string | null
  overrides: Overrides
  history: { status: string; substatus: string | null; at: string }[]
  /** The newest delivery task of the shipment (its route's feed, ETAs and positions concern the page). */
  taskUlid: string | null
  /** Its status: once failed or cancelled, a retry task may follow (any task's notice wakes the page). */
  taskStatus: string | null
  routeId: number | null
  driverId: string | null
  delivery: null | {
    stopsBefore: number
    eta: { from: string; to: string } | null
    /** The promise shown before (the planned window, else the first ETA stated) when the ETA moved past it. */
    delayed: null | { promised: { from: string; to: string }; lateByMinutes: number }
    driverFirstName: string | null
    map: null | { driver: { lat: number; lng: number; recorded_at: string }; destination: { lat: number; lng: number } | null }
  }
  /** The tracking number the carrier gave, else the platform's control number. */
  trackingNumber: string
  /** Who sent it: the merchant when named, else the shipper organization. */
  sender: string
  /** The carrier organization's time zone (its setting, else its country's). */
  timeZone: string
  /** The delivery task's planned time window (the next one not over, else the last). */
  planned: { from: string; to: string } | null
  /** The shipment's status is attempted_delivery: the newest failed task's reason and what the carrier says happens next (null: the page's own text). */
  attempt: null | { reason: string; at: string | null; nextStep: string | null }
  /** The shipment is delivered and its newest delivery task complete: when, who signed, the photo's blob when the carrier shows photos. */
  proof: null | { at: string | null; signedBy: string | null; photo: { blobKey: string; contentType: string } | null }
}

/** The first word of a person's name: all the page may say of its driver. */
export const firstName = (name: string): string | null => name.trim().split(/\s+/)[0] || null

/** The shipment's facts, or null when there is no such shipment or it is not public. */
export async function loadTrackingFacts(platform: Platform, ulid: string): Promise<TrackingFacts | null> {
  const rm = platform.rm
  const s = await rm.selectFrom('shipments').select([
    'id', 'is_public', 'carrier_id', 'carrier_name', 'status', 'substatus', 'final_status', 'finished_at', 'promised_delivery_at',
    'tracking_number', 'control_number', 'shipper_name', 'merchant',
  ]).where('ulid', '=', ulid).executeTakeFirst()
  if (!s || !s.is_public) return null
  const id = Number(s.id)
  const [overrides, history, org, tasks, settings] = await Promise.all([
    statusOverrides(platform.rm, s.carrier_id),
    rm.selectFrom('shipment_status_history').select(['status', 'substatus', 'occurred_at']).where('shipment_id', '=', id).orderBy('stream_version').execute(),
    rm.selectFrom('organizations').select('locale').where('id', '=', s.carrier_id).executeTakeFirst(),
    rm.selectFrom('tasks').select(['ulid', 'status', 'address', 'route_id', 'time_windows', 'signed_by', 'failure_reason', 'attachments', 'completed_at', 'failed_at'])
      .where('shipment_id', '=', id).where('organization_id', '=', s.carrier_id)
      .where('type', '=', 'delivery').orderBy('created_at', 'desc').orderBy('ulid', 'desc').limit(RECENT_TASKS).execute(),
    organizationSettings(rm, s.carrier_id),
  ])
  const final = s.final_status !== null
  const task = tasks[0]
  // The cards follow the shipment's status, never run ahead of it: a completed or failed task whose
  // status change has not landed yet (the workflow sets it a moment later) would otherwise show
  // "Delivered at" under "Out for delivery". A failed attempt stays told while its retry waits.
  const completed = s.status === 'delivered' && task?.status === 'complete' ? task : undefined
  const failed = s.status === 'attempted_delivery' ? tasks.find((x) => x.status === 'failed') : undefined
  const merchant = s.merchant ? json<{ name?: string } | null>(s.merchant) : null
  const now = platform.clock().getTime()
  const windows = task ? json<{ from: string; to: string }[]>(task.time_windows) : []
  const planned = windows.find((w) => Date.parse(w.to) >= now) ?? windows[windows.length - 1] ?? null
  const photo = completed && settings.public_proof_photos
    ? json<TaskAttachmentItem[]>(completed.attachments).find((a) => a.content_type.startsWith('image/')) ?? null : null
  const facts: TrackingFacts = {
    shipmentId: id, carrierId: s.carrier_id, carrierName: s.carrier_name, organizationLocale: org?.locale ?? null,
    status: s.status, substatus: s.substatus, final,
    closesAt: final && s.finished_at ? new Date(s.finished_at).getTime() + AFTER_FINAL_MS : null,
    promisedDeliveryAt: s.promised_delivery_at ? iso(s.promised_delivery_at) : null,
    overrides,
    history: history.map((h) => ({ status: h.status, substatus: h.substatus, at: iso(h.occurred_at) })),
    taskUlid: task?.ulid ?? null, taskStatus: task?.status ?? null, routeId: task?.route_id == null ? null : Number(task.route_id), driverId: null, delivery: null,
    trackingNumber: s.tracking_number ?? s.control_number,
    sender: merchant?.name?.trim() || s.shipper_name,
    timeZone: settings.time_zone,
    planned: planned ? { from: iso(planned.from), to: iso(planned.to) } : null,
    attempt: failed ? {
      reason: failed.failure_reason ?? 'other', at: isoOrNull(failed.failed_at),
      nextStep: settings.delivery_attempt_messages[failed.failure_reason ?? 'other'] ?? settings.delivery_attempt_messages['default'] ?? null,
    } : null,
    proof: completed ? {
      at: isoOrNull(completed.completed_at), signedBy: completed.signed_by, photo: photo ? { blobKey: photo.blob_key, contentType: photo.content_type } : null,
    } : null,
  }
  if (!task || facts.routeId === null || final) return facts
  return withDelivery(platform, facts, task)
}

/** Once the delivery task is on a started route: stops before it, its ETA window, the driver's first name and, when it is next, the map. */
async function withDelivery(platform: Platform, facts: TrackingFacts, task: { ulid: string; status: string; address: unknown }): Promise<TrackingFacts> {
  const rm = platform.rm
  const routeId = facts.routeId!
  const [route, member] = await Promise.all([
    rm.selectFrom('routes').select(['status', 'driver_id']).where('id', '=', routeId).executeTakeFirst(),
    rm.selectFrom('route_tasks').select(['position', 'status']).where('task_ulid', '=', task.ulid).where('route_id', '=', routeId).executeTakeFirst(),
  ])
  if (!route || route.status !== 'started' || !member || !OPEN.some((open) => open === member.status)) return facts
  facts.driverId = route.driver_id
  const [before, eta, driver] = await Promise.all([
    rm.selectFrom('route_tasks').select((eb) => eb.fn.countAll<string>().as('n')).where('route_id', '=', routeId)
      .where('position', '<', member.position).where('status', 'in', OPEN).executeTakeFirst(),
    rm.selectFrom('task_etas').select(['eta_at', 'eta_from', 'eta_to', 'eta_basis', 'eta_computed_at', 'eta_window_from', 'eta_window_to', 'eta_late_since']).where('ulid', '=', task.ulid).executeTakeFirst(),
    route.driver_id === null ? undefined : rm.selectFrom('users').select('name').where('id', '=', route.driver_id).executeTakeFirst(),
  ])
  const stopsBefore = Number(before?.n ?? 0)
  const window = eta ? etaOf(member.status, eta) : null
  const delayed = window ? await delayOf(platform, task.ulid, facts.planned, window.at) : null
  let map: NonNullable<TrackingFacts['delivery']>['map'] = null
  if (stopsBefore === 0 && route.driver_id !== null) {
    const now = platform.clock()
    const p = (await newestPositions(platform.db, [route.driver_id], new Date(now.getTime() - POSITION_STALE_MS))).get(route.driver_id)
    if (p) {
      const a = json<{ geo_latitude?: number | null; geo_longitude?: number | null } | null>(task.address)
      const destination = a && typeof a.geo_latitude === 'number' && typeof a.geo_longitude === 'number' ? { lat: a.geo_latitude, lng: a.geo_longitude } : null
      map = { driver: { lat: p.lat, lng: p.lng, recorded_at: p.recorded_at.toISOString() }, destination }
    }
  }
  facts.delivery = {
    stopsBefore, eta: window ? { from: window.from, to: window.to } : null, delayed,
    driverFirstName: driver ? firstName(driver.name) : null, map,
  }
  return facts
}

/**
 * The promise the page showed before and how far the ETA now lies past it: the planned window, else
 * (a task without one) the first ETA window stated for it. Null while the ETA keeps it.
 */
async function delayOf(platform: Platform, taskUlid: string, planned: { from: string; to: string } | null, at: string): Promise<NonNullable<TrackingFacts['delivery']>['delayed']> {
  let promised = planned
  if (!promised) {
    const first = await platform.rm.selectFrom('task_eta_history').select(['eta_from', 'eta_to']).where('task_ulid', '=', taskUlid).orderBy('seq').limit(1).executeTakeFirst()
    promised = first ? { from: iso(first.eta_from), to: iso(first.eta_to) } : null
  }
  const lateBy = promised ? lateByMinutes(Date.parse(at), Date.parse(promised.to)) : null
  return promised && lateBy !== null ? { promised, lateByMinutes: lateBy } : null
}

/** False once the link has lapsed (30 days after the final status). */
export const isOpen = (facts: TrackingFacts, now: Date): boolean => facts.closesAt === null || now.getTime() < facts.closesAt
