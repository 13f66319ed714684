import { type RawBuilder, sql } from 'kysely'

/**
 * `outbox_listing_counts` (issue 32): the outbox's rows per (target, owner, status, UTC day of
 * created_at), so the delivery logs' `meta.total` and deep pages need no scan. Every statement that
 * inserts rows or changes their status adds its deltas in the same statement (a CTE), so a count is
 * never ahead of or behind the rows it counts. A count may reach zero and stay: sums ignore it.
 */

/** The insert adding `n` of each row of `changes` (columns target, owner_id, status, created_at, n). */
export const addCounts = (changes: RawBuilder<unknown>) => sql`
  insert into outbox_listing_counts (target, owner_id, status, day, n)
  select target, owner_id, status, (created_at at time zone 'UTC')::date, sum(n) from ${changes} as c
  group by 1, 2, 3, 4
  -- One order for every writer: two statements moving the same counts do not deadlock.
  order by 1, 2, 3, 4
  on conflict (target, owner_id, status, day) do update set n = outbox_listing_counts.n + excluded.n`

/** The owner a row is listed under: its carrier, or its webhook. */
export const OWNER = sql`coalesce(carrier_id, webhook_id)`

/** Counts inserted rows: `inserted` names a CTE returning target, owner_id, status, created_at. */
export const countInserted = (inserted: string) =>
  addCounts(sql`(select target, owner_id, status, created_at, 1 as n from ${sql.table(inserted)})`)

/**
 * Moves the counts of rows whose status changed: `moved` names a CTE returning target, owner_id,
 * created_at, `was` (the status before) and `status` (after).
 */
export const countMoved = (moved: string) => addCounts(sql`(
  select target, owner_id, was as status, created_at, -1 as n from ${sql.table(moved)} where was <> status
  union all
  select target, owner_id, status, created_at, 1 as n from ${sql.table(moved)} where was <> status)`)
