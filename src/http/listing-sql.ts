import { sql, type RawBuilder } from 'kysely'
import type { ListingKey, ListingOrder, ListingSeek } from './listing-seek.js'

/**
 * The SQL pieces every flat listing (listing-seek.ts) shares: the key of a row as a cursor keeps it,
 * the row comparison past a cursor's key and the day bound of a deep page, in the listing's order.
 * Written once so each listing's index is met the same way: (at, id) in one direction.
 */

/**
 * A listing's key columns: `at` a timestamptz (`instant`) or a 'YYYY-MM-DD' text (`day`: a route's
 * shift date, whose day is itself), `id` a bigint id or a text ulid.
 */
export interface ListingColumns { at: string; atKind: 'instant' | 'day'; id: string; idType: 'bigint' | 'text'; order: ListingOrder }

/** The `at` column as the cursor keeps it: UTC to the microsecond (the driver's Date drops them); a day at its midnight. */
export const keyAt = (c: Pick<ListingColumns, 'at' | 'atKind'>): RawBuilder<string> => c.atKind === 'day'
  ? sql<string>`${sql.ref(c.at)} || 'T00:00:00.000000Z'`
  : sql<string>`to_char(${sql.ref(c.at)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const atValue = (c: ListingColumns, at: string | Date) => {
  const iso = typeof at === 'string' ? at : at.toISOString()
  return c.atKind === 'day' ? sql`${iso.slice(0, 10)}` : sql`${iso}::timestamptz`
}

/** The rows past `key` in the listing's order. */
export function pastKey(c: ListingColumns, key: ListingKey): RawBuilder<boolean> {
  const op = sql.raw(c.order === 'desc' ? '<' : '>')
  return sql<boolean>`(${sql.ref(c.at)}, ${sql.ref(c.id)}) ${op} (${atValue(c, key.at)}, ${key.id}::${sql.raw(c.idType)})`
}

/** Where a seek puts a page's first row, as conditions on the listing's own columns (skip apart). */
export function seekConditions(c: ListingColumns, seek: ListingSeek): RawBuilder<boolean>[] {
  const out: RawBuilder<boolean>[] = []
  if (seek.dayEnd) out.push(sql<boolean>`${sql.ref(c.at)} < ${atValue(c, seek.dayEnd)}`)
  if (seek.dayStart) out.push(sql<boolean>`${sql.ref(c.at)} >= ${atValue(c, seek.dayStart)}`)
  if (seek.before) out.push(pastKey(c, seek.before))
  return out
}

/** The day of a counts table's `day` column, as the seek reads it ('YYYY-MM-DD'). */
export const countedDay = (column = 'day'): RawBuilder<string> => sql<string>`to_char(${sql.ref(column)}, 'YYYY-MM-DD')`

/** The sum of the counts rows a filter selects (none: 0): the total of a listing without day counts. */
export const summed = (rows: { n: string | number }[]): number => rows.reduce((sum, r) => sum + Number(r.n), 0)
