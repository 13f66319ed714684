import { type Kysely, sql } from 'kysely'

/**
 * Integer ids handed out from blocks of a PostgreSQL sequence (hi/lo): one `nextval` round trip per
 * block instead of one per id, which POST /shipments pays on every request otherwise. Ids stay
 * unique across processes (each block comes from the sequence); they increase within a process,
 * and a process that stops leaves the rest of its block unused, a gap like any rolled-back nextval.
 */
export class SequenceBlocks {
  private free: number[] = []
  private refill: Promise<void> | undefined

  constructor(private readonly db: Kysely<any>, private readonly sequence: string, private readonly blockSize = 64) {}

  /** `n` fresh ids, ascending. */
  async take(n: number): Promise<number[]> {
    if (n <= 0) return []
    while (this.free.length < n) {
      // One refill at a time; whoever waited on it looks again (another taker may have emptied it).
      this.refill ??= this.fetch(Math.max(this.blockSize, n - this.free.length)).finally(() => { this.refill = undefined })
      await this.refill
    }
    return this.free.splice(0, n)
  }

  private async fetch(count: number): Promise<void> {
    const r = await sql<{ id: string }>`select nextval(${this.sequence}::regclass) as id from generate_series(1, ${count}::int)`.execute(this.db)
    const ids = r.rows.map((row) => Number(row.id)).sort((a, b) => a - b)
    this.free.push(...ids)
  }
}
