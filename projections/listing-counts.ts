import { sql, type RawBuilder } from 'kysely'

/**
 * A batch's deltas to a listing's counts (issue 32), per key (the organization and the filter
 * values the listing's counts keep): what each changed row was before and is after, summed, so the
 * projection writes the counts table once per batch and skips keys whose changes cancel out.
 */
export class CountDeltas<C extends string> {
  readonly #n = new Map<string, Record<C, string> & { n: number }>()
  constructor(private readonly columns: readonly C[]) {}

  /** `row`: exactly the key's columns (as selected or returned), since it becomes the upserted row. */
  add(row: Record<C, string>, n: number): void {
    const key = this.columns.map((c) => row[c]).join('\u0000')
    const d = this.#n.get(key)
    if (d) d.n += n
    else this.#n.set(key, { ...row, n })
  }

  /** A row that moved: out of its key before, into its key after. */
  moved(before: Record<C, string> | undefined, after: Record<C, string> | undefined): void {
    if (before) this.add(before, -1)
    if (after) this.add(after, +1)
  }

  /** The rows to upsert (adding `n`), none when nothing changed. */
  rows(): (Record<C, string> & { n: number })[] {
    return [...this.#n.values()].filter((d) => d.n !== 0)
  }
}

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
