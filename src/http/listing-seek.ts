import { ValidationError } from '../shared/errors.js'

/**
 * Where a page of an organization's listing starts (issue 32, docs/decisions.md): after a cursor's
 * key, or for an explicit `page=N` inside the UTC day that holds its first row (found by walking the
 * listing's day counts in the listing's order), so no page reads more than one day's rows before its
 * own. Every listing kept flat this way orders by (created_at, id), newest first (`desc`: shipments,
 * routes, the outbox's delivery logs) or oldest first (`asc`: tasks, workflows, and users, vehicles,
 * blueprints and webhooks, which have no day counts: `page=N` an offset in their index range).
 */

/** Newest first or oldest first: the direction of (created_at, id) a listing walks. */
export type ListingOrder = 'asc' | 'desc'

/** A listing row's place in the order (created_at, id); `at` keeps microseconds. The id is a number or a ULID-like string. */
export interface ListingKey { at: string; id: number | string }

/** What `cursor` carries: the last row of the page before, and the number of the page it opens. */
export interface ListingCursor { key: ListingKey; page: number }

const AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

export const encodeCursor = (c: ListingCursor): string =>
  Buffer.from(JSON.stringify([c.key.at, c.key.id, c.page])).toString('base64url')

/** The cursor a client sent, or undefined when it is not one this listing gave. */
export function decodeCursor(text: string, idKind: 'number' | 'string'): ListingCursor | undefined {
  let parsed: unknown
  try { parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) } catch { return undefined }
  if (!Array.isArray(parsed) || parsed.length !== 3) return undefined
  const [at, id, page]: unknown[] = parsed
  if (typeof at !== 'string' || !AT.test(at) || Number.isNaN(Date.parse(at))) return undefined
  if (typeof page !== 'number' || !Number.isSafeInteger(page) || page < 1) return undefined
  // The id is of the listing's own kind: a cursor of another listing does not reach its SQL.
  if (idKind === 'number' && typeof id === 'number' && Number.isSafeInteger(id)) return { key: { at, id }, page }
  if (idKind === 'string' && typeof id === 'string' && /^[\w-]{1,64}$/.test(id)) return { key: { at, id }, page }
  return undefined
}

/** An organization's listed rows of one UTC day ('YYYY-MM-DD') under the request's filters. */
export interface DayCount { day: string; n: number }

/**
 * Where a page starts: after `before` (the last row of the page before, in the listing's order), or
 * from the day that holds the page's first row (newest first: below `dayEnd`; oldest first: from
 * `dayStart`), then `skip` rows on.
 */
export interface ListingSeek { before?: ListingKey; dayEnd?: Date; dayStart?: Date; skip: number }

const startOfDay = (day: string): Date => new Date(`${day}T00:00:00Z`)
const nextDay = (day: string): Date => new Date(startOfDay(day).getTime() + 86_400_000)

/**
 * The seek to the row `offset` (0-based) of a listing whose days are `days`, in the listing's order
 * (newest first for `desc`, oldest first for `asc`): into the day that holds it, skipping the rows
 * of that day before it. Undefined: past the end.
 */
export function seekToOffset(days: readonly DayCount[], offset: number, order: ListingOrder = 'desc'): ListingSeek | undefined {
  if (offset === 0) return { skip: 0 }
  let before = 0
  for (const d of days) {
    if (offset < before + d.n) {
      const skip = offset - before
      return order === 'desc' ? { dayEnd: nextDay(d.day), skip } : { dayStart: startOfDay(d.day), skip }
    }
    before += d.n
  }
  return undefined
}

/** A page's rows past the cursor: one more than the page is read, so `hasMore` needs no count. */
export function pageAndMore<T>(rows: readonly T[], perPage: number): { shown: T[]; hasMore: boolean } {
  return { shown: rows.slice(0, perPage), hasMore: rows.length > perPage }
}

/**
 * The cursor of a request (422 when this listing did not give it): it opens the page it was made
 * for, so `paging.page` takes its number (`meta.from` counts the rows before it).
 */
export function requestCursor(raw: string | undefined, idKind: 'number' | 'string', paging: { page: number }): ListingKey | undefined {
  if (raw === undefined) return undefined
  const cursor = decodeCursor(raw, idKind)
  if (!cursor) throw ValidationError.field('cursor', 'The cursor is invalid: take it from links.next.')
  paging.page = cursor.page
  return cursor.key
}

/** `links.next`'s cursor: after the page's last row, when a row follows it. */
export const nextCursor = (hasMore: boolean, last: ListingKey | undefined, page: number): string | undefined =>
  hasMore && last ? encodeCursor({ key: last, page: page + 1 }) : undefined

/**
 * A flat listing's page: after the cursor's key (`after`), or for page N through the day counts;
 * a listing without day counts (`days` undefined: a filter naming few rows, a driver's own view)
 * counts them and skips inside them. One row more than the page is read to know whether one follows.
 */
export async function readPage<R extends { key: ListingKey }>(o: {
  days: DayCount[] | undefined; countTotal: () => Promise<number>; order: ListingOrder
  page: { perPage: number; page: number }; after: ListingKey | undefined
  read: (seek: ListingSeek, limit: number) => Promise<R[]>
}): Promise<{ total: number; shown: R[]; hasMore: boolean; last: ListingKey | undefined }> {
  const total = o.days ? o.days.reduce((sum, d) => sum + d.n, 0) : await o.countTotal()
  const offset = (o.page.page - 1) * o.page.perPage
  const seek = o.after ? { before: o.after, skip: 0 } : o.days ? seekToOffset(o.days, offset, o.order) : { skip: offset }
  const { shown, hasMore } = pageAndMore(seek ? await o.read(seek, o.page.perPage + 1) : [], o.page.perPage)
  return { total, shown, hasMore, last: shown.at(-1)?.key }
}
