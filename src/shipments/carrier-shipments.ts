import type { Platform } from '../platform.js'
import { NotFoundError, ValidationError } from '../shared/errors.js'
import { shipmentViewQuery, toShipment, type ShipmentLinks, type ShipmentView } from './queries.js'
import { isoOrNull, json } from '../shared/rows.js'

/**
 * The carrier's view of its shipments (DESIGN §3.5): the routes-API shipment plus the carrier-side
 * state and `custom_data` (the quote that priced it). A carrier sees only shipments of its own
 * service types, i.e. those whose `carrier_hub_id` is this carrier.
 */
export function toCarrierShipment(v: ShipmentView, links?: ShipmentLinks) {
  return {
    ...toShipment(v, undefined, links),
    carrier_state: v.carrier_phase,
    carrier_status: v.carrier_status,
    in_return: v.in_return,
    documented_at: isoOrNull(v.documented_at),
    ready_at: isoOrNull(v.ready_at),
    cancelled_at: isoOrNull(v.cancelled_at),
    expired_at: isoOrNull(v.expired_at),
    custom_data: json<Record<string, unknown> | null>(v.custom_data) ?? {},
  }
}

export async function carrierShipment(p: Platform, carrierId: string, id: number, links?: ShipmentLinks) {
  const v = await shipmentViewQuery(p.rm).where('s.id', '=', id).where('s.carrier_hub_id', '=', carrierId).executeTakeFirst()
  if (!v) throw new NotFoundError('Shipment')
  return toCarrierShipment(v, links)
}

/**
 * Opaque cursor: the change sequence reached, the `updated_since` the listing started with, and the
 * last change sequence when it started (`head`): a change committed after that is listed whatever
 * its clock says, since the client asked for changes from then on. Cursors issued before `head`
 * existed have two elements and decode with `head: null` (the `updated_at` filter alone).
 */
interface Cursor { seq: number; since: string | null; head: number | null }

export const encodeCursor = (c: Cursor): string =>
  Buffer.from(JSON.stringify(c.since === null ? [c.seq, null] : [c.seq, c.since, c.head])).toString('base64url')

const isSeq = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0

export function decodeCursor(raw: string): Cursor {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as unknown
    if (Array.isArray(parsed) && (parsed.length === 2 || parsed.length === 3)) {
      const [seq, since, head = null] = parsed as [unknown, unknown, unknown]
      const sinceOk = since === null || (typeof since === 'string' && !Number.isNaN(Date.parse(since)))
      if (isSeq(seq) && sinceOk && (head === null || isSeq(head))) return { seq, since: since as string | null, head: since === null ? null : head }
    }
  } catch { /* fall through */ }
  throw ValidationError.field('cursor', 'The cursor is invalid.')
}

/**
 * The change feed (DESIGN §2): rows in order of their change sequence, which the shipments
 * projector assigns in commit order on every change. A shipment that changes while the client
 * pages gets a new, higher sequence and is listed again later with its new state; an unchanged
 * one is never listed twice. `next_cursor` is always returned; an empty page means caught up.
 *
 * With `updated_since` the listing starts just before the lowest change sequence among the rows
 * updated since then. `updated_at` is the command's clock, so those rows are not a suffix of the
 * sequence (a command that read the clock later may commit first); `feed_watermark`, the latest
 * `updated_at` of any change up to a row's sequence, never decreases along it, so the rows whose
 * watermark reaches `updated_since` are a suffix that holds all of them, and its first row is one
 * index seek away. From there the pages filter on `updated_at` (the rows out of clock order near
 * the start are the only ones passed over) or on a sequence past the head at the start.
 */
export async function shipmentFeed(p: Pick<Platform, 'rm'>, carrierId: string, q: { updated_since?: string; cursor?: string; limit?: number }, links?: ShipmentLinks) {
  const limit = q.limit ?? 20
  let cursor: Cursor
  if (q.cursor !== undefined) cursor = decodeCursor(q.cursor)
  else if (q.updated_since === undefined) cursor = { seq: 0, since: null, head: null }
  else {
    const since = new Date(q.updated_since)
    // One statement, one snapshot: if no row reaches updated_since, the listing starts after the
    // head read in the same snapshot, so a change committed meanwhile is still ahead of it.
    const start = await p.rm.selectNoFrom((eb) => [
      eb.selectFrom('shipments').select('change_seq').where('carrier_hub_id', '=', carrierId).where('feed_watermark', '>=', since)
        .orderBy('feed_watermark').orderBy('change_seq').limit(1).as('first'),
      eb.selectFrom('shipments').select((e) => e.fn.max('change_seq').as('m')).where('carrier_hub_id', '=', carrierId).as('head'),
    ]).executeTakeFirstOrThrow()
    const head = start.head == null ? 0 : Number(start.head)
    cursor = { seq: start.first == null ? head : Number(start.first) - 1, since: q.updated_since, head }
  }
  let ids = p.rm.selectFrom('shipments as s').select(['s.id', 's.change_seq'])
    .where('s.carrier_hub_id', '=', carrierId).where('s.change_seq', '>', cursor.seq)
  if (cursor.since !== null) {
    const { since, head } = cursor
    ids = ids.where((eb) => head === null
      ? eb('s.updated_at', '>=', new Date(since))
      : eb.or([eb('s.updated_at', '>=', new Date(since)), eb('s.change_seq', '>', head)]))
  }
  const page = await ids.orderBy('s.change_seq').limit(limit).execute()
  const views = page.length === 0 ? [] : await shipmentViewQuery(p.rm).where('s.id', 'in', page.map((r) => Number(r.id))).orderBy('s.change_seq').execute()
  const last = page.at(-1)
  return {
    data: views.map((v) => toCarrierShipment(v, links)),
    meta: { next_cursor: encodeCursor({ ...cursor, seq: last ? Number(last.change_seq) : cursor.seq }) },
  }
}
