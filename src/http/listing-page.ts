import { ValidationError } from '../shared/errors.js'
import { type DayCount, decodeCursor, encodeCursor, type ListingCursor, type ListingKey, type ListingSeek, seekToOffset } from './listing-seek.js'
import { type Keyset, type PageRequest, pageRequest } from './pagination.js'

/**
 * One page of a listing kept flat (issue 32, docs/decisions.md), whatever its rows: the total from
 * the day counts (or, for a filter the counts do not key, a count of its few rows), the page sought
 * after a cursor's key, or for `page=N` inside its day, one row more read to know whether any follows.
 */
export interface FlatListing<R> {
  /** The listing's rows per UTC day newest first, or undefined under a filter the counts do not key. */
  days: () => Promise<DayCount[] | undefined>
  /** The total under such a filter: a count through its index (a few rows). */
  count: () => Promise<number>
  /** `limit` rows from the seek, in the listing's order, each with its key. */
  read: (seek: ListingSeek, limit: number) => Promise<{ row: R; key: ListingKey }[]>
}

export async function flatPage<R>(l: FlatListing<R>, perPage: number, page: number, after?: ListingKey) {
  const days = await l.days()
  const total = days ? days.reduce((sum, d) => sum + d.n, 0) : await l.count()
  const offset = (page - 1) * perPage
  // Without day counts the filter names a few rows: an offset among them costs nothing.
  const seek = after ? { before: after, skip: 0 } : days ? seekToOffset(days, offset) : { skip: offset }
  const rows = seek ? await l.read(seek, perPage + 1) : []
  const shown = rows.slice(0, perPage)
  return { rows: shown.map((r) => r.row), total, hasMore: rows.length > perPage, last: shown.at(-1)?.key }
}

/** The request's `cursor` decoded, or a 422 when this listing did not give it. */
export function requestCursor(text: string | undefined, idKind: 'number' | 'string'): ListingCursor | undefined {
  if (text === undefined) return undefined
  const cursor = decodeCursor(text, idKind)
  if (!cursor) throw ValidationError.field('cursor', 'The cursor is invalid: take it from links.next.')
  return cursor
}

/** The page a flat listing's request asks for: a cursor opens the page it was made for (its number counts the rows before it, meta.from). */
export function flatRequest(q: { perPage?: number | undefined; page?: number | undefined; cursor?: string | undefined }, idKind: 'number' | 'string', defaultPerPage?: number): { paging: PageRequest; after: ListingKey | undefined } {
  const paging = pageRequest(q, defaultPerPage)
  const cursor = requestCursor(q.cursor, idKind)
  if (cursor) paging.page = cursor.page
  return { paging, after: cursor?.key }
}

/** pageOf's keyset: the cursor after the page's last row, when a row follows it. */
export const keysetOf = (l: { hasMore: boolean; last: ListingKey | undefined }, page: number): Keyset =>
  ({ next: l.hasMore && l.last ? encodeCursor({ key: l.last, page: page + 1 }) : undefined })
