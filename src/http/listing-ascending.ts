import { sql } from 'kysely'
import { flatPage } from './listing-page.js'
import type { ListingKey } from './listing-seek.js'

/**
 * The small per-organization listings (users, vehicles, blueprints, webhooks: issue 32,
 * docs/decisions.md) list oldest first, (created_at asc, id asc): listing-seek.ts seeks newest
 * first, so this is its sibling the other way. The cursor is the same (listing-seek's
 * encodeCursor/decodeCursor through flatRequest and keysetOf); their totals come from counts their
 * projections keep, and `page=N` is an OFFSET inside the organization's (and filter's) index range.
 */

/** A row's key as cursors carry it: `at` to the microsecond, in UTC. */
export const keyAt = (column: string) => sql<string>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** The rows after `key` in the order (created_at, id): a seek on the listing's index. */
export const afterKey = (atColumn: string, idColumn: string, key: ListingKey) =>
  sql<boolean>`(${sql.ref(atColumn)}, ${sql.ref(idColumn)}) > (${key.at}::timestamptz, ${typeof key.id === 'number' ? sql`${key.id}::bigint` : sql`${key.id}::text`})`

/** A page oldest first: after the cursor's key, or `skip` rows into the index range for `page=N`. */
export const ascendingPage = <R>(
  total: () => Promise<number>,
  read: (after: ListingKey | undefined, skip: number, limit: number) => Promise<{ row: R; key: ListingKey }[]>,
  perPage: number, page: number, after: ListingKey | undefined,
) => flatPage({ days: async () => undefined, count: total, read: (seek, limit) => read(seek.before, seek.skip, limit) }, perPage, page, after)

/** The sum of the counts rows a filter selects (none: 0). */
export const summed = (rows: { n: string | number }[]): number => rows.reduce((sum, r) => sum + Number(r.n), 0)
