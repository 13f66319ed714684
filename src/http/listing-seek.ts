/**
 * Where a page of an organization's listing starts (issue 32, docs/decisions.md): after a cursor's
 * key, or for an explicit `page=N` inside the UTC day that holds its first row (found by walking the
 * listing's day counts newest first), so no page reads more than one day's rows before its own.
 * Every listing kept flat this way orders by (created_at desc, id desc).
 */

/** A listing row's place in the order (created_at desc, id desc); `at` keeps microseconds. The id is a number or a ULID-like string. */
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

/** Where a page starts: after `before`, or below `dayEnd`, then `skip` rows on. */
export interface ListingSeek { before?: ListingKey; dayEnd?: Date; skip: number }

const nextDay = (day: string): Date => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000)

/**
 * The seek to the row `offset` (0-based) of a listing whose days are `days`, newest first: below
 * the end of the day that holds it, skipping the rows of that day before it. Undefined: past the end.
 */
export function seekToOffset(days: readonly DayCount[], offset: number): ListingSeek | undefined {
  if (offset === 0) return { skip: 0 }
  let before = 0
  for (const d of days) {
    if (offset < before + d.n) return { dayEnd: nextDay(d.day), skip: offset - before }
    before += d.n
  }
  return undefined
}
