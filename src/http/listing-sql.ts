import { sql, type RawBuilder } from 'kysely'
import type { ListingKey, ListingOrder, ListingSeek } from './listing-seek.js'

/**
 * The SQL pieces every flat listing (listing-seek.ts) shares: the key of a row as a cursor keeps it,
 * the row comparison past a cursor's key and the day bound of a deep page, in the listing's order.
 * Written once so each listing's index is met the same way: (created_at, id) in one direction.
 */

/** A timestamptz column as the cursor keeps it: UTC to the microsecond (the driver's Date drops them). */
export const keyAt = (column: string): RawBuilder<string> =>
  sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** The rows past `key` in the listing's order; `idType` casts the id as its column is (bigint ids or text ulids). */
export function pastKey(at: string, id: string, key: ListingKey, order: ListingOrder, idType: 'bigint' | 'text'): RawBuilder<boolean> {
  const op = sql.raw(order === 'desc' ? '<' : '>')
  return sql<boolean>`(${sql.ref(at)}, ${sql.ref(id)}) ${op} (${key.at}::timestamptz, ${key.id}::${sql.raw(idType)})`
}

/** Where a seek puts a page's first row, as conditions on the listing's own columns (skip apart). */
export function seekConditions(at: string, id: string, seek: ListingSeek, order: ListingOrder, idType: 'bigint' | 'text'): RawBuilder<boolean>[] {
  const out: RawBuilder<boolean>[] = []
  if (seek.dayEnd) out.push(sql<boolean>`${sql.ref(at)} < ${seek.dayEnd}`)
  if (seek.dayStart) out.push(sql<boolean>`${sql.ref(at)} >= ${seek.dayStart}`)
  if (seek.before) out.push(pastKey(at, id, seek.before, order, idType))
  return out
}
