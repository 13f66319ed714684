import type { Platform } from '../platform.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import { shipmentViewQuery, toShipment, type ShipmentView } from '../shipments/queries.js'

/**
 * The carrier's view of its shipments (DESIGN §3.5): the routes-API shipment plus the carrier-side
 * state and `custom_data` (the quote that priced it). A carrier sees only shipments of its own
 * service types, i.e. those whose `carrier_hub_id` is this carrier.
 */
export function toCarrierShipment(v: ShipmentView) {
  const parse = (x: unknown) => (typeof x === 'string' ? JSON.parse(x) : x)
  const iso = (x: unknown) => (x == null ? null : new Date(x as string).toISOString())
  return {
    ...toShipment(v),
    carrier_state: v.carrier_phase,
    carrier_status: v.carrier_status,
    in_return: v.in_return,
    documented_at: iso(v.documented_at),
    ready_at: iso(v.ready_at),
    cancelled_at: iso(v.cancelled_at),
    expired_at: iso(v.expired_at),
    custom_data: parse(v.custom_data) ?? {},
  }
}

export async function carrierShipment(p: Platform, carrierId: string, id: number) {
  const v = await shipmentViewQuery(p).where('s.id', '=', id).where('s.carrier_hub_id', '=', carrierId).executeTakeFirst()
  if (!v) throw new NotFoundError('Shipment')
  return toCarrierShipment(v)
}

export async function requireCarrierShipment(p: Platform, carrierId: string, id: number): Promise<void> {
  const row = await p.rm.selectFrom('shipments').select('id').where('id', '=', id).where('carrier_hub_id', '=', carrierId).executeTakeFirst()
  if (!row) throw new NotFoundError('Shipment')
}

/** Opaque cursor: the change sequence reached and the `updated_since` the listing started with. */
interface Cursor { seq: number; since: string | null }

export const encodeCursor = (c: Cursor): string => Buffer.from(JSON.stringify([c.seq, c.since])).toString('base64url')

export function decodeCursor(raw: string): Cursor {
  try {
    const [seq, since] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as [unknown, unknown]
    if (typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 && (since === null || (typeof since === 'string' && !Number.isNaN(Date.parse(since))))) {
      return { seq, since: since as string | null }
    }
  } catch { /* fall through */ }
  throw ValidationError.field('cursor', 'The cursor is invalid.')
}

/**
 * The change feed (DESIGN §2): rows in order of their change sequence, which the shipments
 * projector assigns in commit order on every change. A shipment that changes while the client
 * pages gets a new, higher sequence and is listed again later with its new state; an unchanged
 * one is never listed twice. `next_cursor` is always returned; an empty page means caught up.
 */
/**
 * Rows committed out of clock order differ in `updated_at` by at most a command's duration; the
 * feed starts this far before `updated_since` so none of them is missed.
 */
export const UPDATED_SINCE_SLACK_MS = 5 * 60_000

export async function shipmentFeed(p: Platform, carrierId: string, q: { updated_since?: string; cursor?: string; limit?: number }) {
  const limit = q.limit ?? 20
  let cursor: Cursor
  if (q.cursor !== undefined) cursor = decodeCursor(q.cursor)
  else if (q.updated_since === undefined) cursor = { seq: 0, since: null }
  else {
    // First page by time: start just before the first change near updated_since (an index seek),
    // not at the beginning of the carrier's history; the filter on updated_at stays exact.
    const from = new Date(Date.parse(q.updated_since) - UPDATED_SINCE_SLACK_MS)
    const first = await p.rm.selectFrom('shipments').select('change_seq')
      .where('carrier_hub_id', '=', carrierId).where('updated_at', '>=', from)
      .orderBy('updated_at').limit(1).executeTakeFirst()
    cursor = { seq: first ? Math.max(0, Number(first.change_seq) - 1) : 0, since: q.updated_since }
    if (!first) {
      // Nothing changed since then: start after the newest change, so polling stays cheap.
      const last = await p.rm.selectFrom('shipments').select('change_seq').where('carrier_hub_id', '=', carrierId)
        .orderBy('change_seq', 'desc').limit(1).executeTakeFirst()
      cursor.seq = last ? Number(last.change_seq) : 0
    }
  }
  let ids = p.rm.selectFrom('shipments as s').select(['s.id', 's.change_seq'])
    .where('s.carrier_hub_id', '=', carrierId).where('s.change_seq', '>', cursor.seq)
  if (cursor.since !== null) ids = ids.where('s.updated_at', '>=', new Date(cursor.since))
  const page = await ids.orderBy('s.change_seq').limit(limit).execute()
  const views = page.length === 0 ? [] : await shipmentViewQuery(p).where('s.id', 'in', page.map((r) => Number(r.id))).orderBy('s.change_seq').execute()
  const last = page.at(-1)
  return {
    data: views.map(toCarrierShipment),
    meta: { next_cursor: encodeCursor({ seq: last ? Number(last.change_seq) : cursor.seq, since: cursor.since }) },
  }
}
