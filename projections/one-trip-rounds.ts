import { type CompiledQuery, type Kysely, sql } from 'kysely'
import { inlineStatements, REQUIRED_ROW_COUNT_MISSED } from '../src/infrastructure/database/inline-statements.js'
import type { Projection } from './projection.js'
import { readModelIn, type ReadModelDatabase } from './read-model-database.js'
import { casRows, type Round, type RoundWriter } from './round-writer.js'
import { errnoOf } from '../src/shared/thrown.js'

/**
 * PostgreSQL: a round as one string of statements sent by the simple-query protocol, one implicit
 * transaction, one write round trip instead of four (BEGIN, compare-and-set, writes, COMMIT). The
 * compare-and-set must win every due checkpoint, or the round raises and rolls back whole (it
 * resolves to none moved). The projections hand over their writes as statements (`statements`),
 * built from reads outside the round's transaction: what they read is the last committed round,
 * which holds because the round fails whole when another writer moved a checkpoint meanwhile, and
 * the compare-and-set holds only on the checkpoints table those reads saw (a rebuild's swap makes it
 * lose). Takes a round only when every due projection offers statements, the round is not careful,
 * the last one was not lost, and that table is known; the transactional writer takes the others.
 */
export class OneTripRounds implements RoundWriter {
  constructor(private readonly db: Kysely<any>, private readonly send: (text: string) => Promise<void>) {}

  accepts(round: Round): boolean {
    return !round.careful && !round.afterLoss && round.checkpointTable !== undefined && !this.db.isTransaction
      && round.due.every((p) => p.statements || round.wanted(p).length === 0)
  }

  async write(round: Round): Promise<Projection[]> {
    const rm = readModelIn(this.db, round.schema)
    const writes: CompiledQuery[] = []
    for (const p of round.due) {
      const wanted = round.wanted(p)
      if (wanted.length) writes.push(...await p.statements!(rm, wanted, round.ctx))
    }
    const cas = sql`
      with cfg as materialized (select set_config('synchronous_commit', 'off', true) as v),
      won as (
        update ${sql.id(round.schema, 'projection_checkpoints')} c set checkpoint = v.next, updated_at = now()
        from ${casRows(round)}, cfg
        where c.name = v.name and c.checkpoint = v.prev and c.tableoid = ${round.checkpointTable!}::oid
          and pg_try_advisory_xact_lock(hashtextextended(v.lock, 0))
        returning 1)
      select require_row_count(count(*), ${round.due.length}::int, 'projection checkpoints moved') from won`.compile(this.db)
    const notice = round.noticeStatement()
    try {
      await this.send(inlineStatements([cas, ...writes, ...(notice ? [notice.compile(this.db)] : [])]))
    } catch (err) {
      // Lost to another writer (it moved a checkpoint or holds a lock): nothing moved.
      if (errnoOf(err) === REQUIRED_ROW_COUNT_MISSED) return []
      throw err
    }
    return round.due
  }
}
