import { sql, type RawBuilder } from 'kysely'

/**
 * Listing counts kept by recounting the rows a batch touches (issue 32): the touched rows' keys are
 * subtracted before the batch's writes and added after them, so whatever the batch changed (status,
 * driver, day) moves its count, and a row created in the batch counts once. A count at zero is
 * deleted at the end (its table has a partial index on `n = 0`, so that delete reads only those):
 * the rows are a function of the source rows, whatever the batches (a rebuild gives the same).
 */

/**
 * Adds `sign` per row of `keys` (a select giving the counts' key `columns`, one row per counted
 * source row and scope) to the counts `table` of `schema`.
 */
export function addCounts(schema: string, table: string, columns: readonly string[], keys: RawBuilder<unknown>, sign: 1 | -1): RawBuilder<unknown> {
  const cols = sql.join(columns.map((c) => sql.id(c)))
  const key = sql.join(columns.map((c) => sql.ref(`k.${c}`)))
  return sql`insert into ${sql.id(schema, table)} as c (${cols}, n)
    select ${key}, ${sign} * count(*) from (${keys}) k group by ${key}
    on conflict (${cols}) do update set n = c.n + excluded.n`
}

/** Deletes the counts at zero (through the table's partial index on `n = 0`). */
export const dropZeroCounts = (schema: string, table: string): RawBuilder<unknown> =>
  sql`delete from ${sql.id(schema, table)} where n = 0`
