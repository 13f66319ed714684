import { type Kysely, sql } from 'kysely'
import type { RecordedEvent } from '../src/infrastructure/event-store/event-store.js'
import type { Projection, ProjectionContext } from './projection.js'
import { readModelIn, type ReadModelDatabase } from './read-model-database.js'
import { casRows, type Round, type RoundWriter } from './round-writer.js'
import { messageOf } from '../src/shared/thrown.js'

export interface ParkingLogger { warn(obj: object, msg: string): void }

/**
 * A round in one transaction (one commit per round, not one per projection: the lag): BEGIN, lock
 * and compare-and-set in one statement, the projections' writes, the notice, COMMIT. Takes every
 * round (PGlite; the first rounds and the careful ones on PostgreSQL). A careful round applies each
 * batch under a savepoint, and event by event when the batch fails, parking what still fails.
 * On a runner built on a transaction (the rebuild's swap) it works inside it, always carefully, so
 * a failing write cannot abort the caller's transaction.
 */
export class TransactionalRounds implements RoundWriter {
  constructor(
    private readonly db: Kysely<any>,
    private readonly parkedCount: Map<string, number>,
    private readonly logger?: ParkingLogger,
  ) {}

  accepts(): boolean { return true }

  write(round: Round): Promise<Projection[]> {
    const run = async (trx: Kysely<any>): Promise<Projection[]> => {
      // Read models are rebuilt from the log and the checkpoint commits with the rows, so a crash that
      // loses the last projection commits only replays them: no need to wait for the WAL flush (lag).
      const cas = await sql<{ name: string }>`
        with cfg as materialized (select ${this.db.isTransaction ? sql`1` : sql`set_config('synchronous_commit', 'off', true)`} as v)
        update ${sql.id(round.schema, 'projection_checkpoints')} c set checkpoint = v.next, updated_at = now()
        from ${casRows(round)}, cfg
        where c.name = v.name and c.checkpoint = v.prev and pg_try_advisory_xact_lock(hashtextextended(v.lock, 0))
        returning c.name`.execute(trx)
      const won = round.due.filter((p) => cas.rows.some((r) => r.name === p.name))
      const rm = readModelIn(trx, round.schema)
      for (const p of won) {
        const wanted = round.wanted(p)
        if (!wanted.length) continue
        if (round.careful) await this.applySafely(trx, rm, p, wanted, round.ctx)
        else await p.apply(rm, wanted, round.ctx)
      }
      const notice = won.length ? round.noticeStatement() : undefined
      if (notice) await notice.execute(trx)
      return won
    }
    return this.db.isTransaction ? run(this.db) : this.db.transaction().execute(run)
  }

  /** A batch that fails is retried event by event; an event that still fails is parked, not retried forever. */
  private async applySafely(trx: Kysely<any>, rm: Kysely<ReadModelDatabase>, p: Projection, events: RecordedEvent[], ctx: ProjectionContext): Promise<void> {
    await sql`savepoint batch`.execute(trx)
    try {
      await p.apply(rm, events, ctx)
      await sql`release savepoint batch`.execute(trx)
      return
    } catch {
      await sql`rollback to savepoint batch`.execute(trx)
    }
    for (const e of events) {
      await sql`savepoint one`.execute(trx)
      try {
        await p.apply(rm, [e], ctx)
        await sql`release savepoint one`.execute(trx)
      } catch (err) {
        await sql`rollback to savepoint one`.execute(trx)
        this.parkedCount.set(p.name, (this.parkedCount.get(p.name) ?? 0) + 1)
        this.logger?.warn({ err, event_id: e.id, type: e.type, projection: p.name }, 'event parked by projection')
        await rm.insertInto('projection_parked').values({
          projection: p.name, event_id: e.id, position: e.position, error: messageOf(err).slice(0, 2000),
        }).onConflict((oc) => oc.doNothing()).execute()
      }
    }
  }
}
