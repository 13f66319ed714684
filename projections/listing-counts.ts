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
