import type { Kysely } from 'kysely'
import { readModelIn, type ReadModelDatabase } from '../../projections/read-model-database.js'
import type { EventStore, RecordedEvent } from '../infrastructure/event-store/event-store.js'
import { batchesAfter, batchesBetween, POSITIONS_START, type PositionBatch } from '../positions/positions-table.js'
import { prepare } from './eta-engine.js'
import { EtaModel, type EtaSettings } from './eta-model.js'
import { type Checkpoint, ENGINE, journal, journalAfter, readCheckpoint, takeEtaLock, writeOutput } from './eta-tables.js'

/** Inputs replayed between two writes (the model is flushed and forgotten then, so memory stays bounded). */
const FLUSH_EVERY = 500

/**
 * Replays the ETA engine into a fresh read-model schema (the rebuild, docs/decisions.md "ETAs"): the
 * log's events and the retained positions in the order the live engine met them, which its journal
 * records: before each journalled round's events, the positions it had taken; after them, its tick.
 * The rows come out as the live engine wrote them (what was pruned is missing from both: positions
 * older than POSITION_RETENTION_DAYS replay as if never sent).
 */
export class EtaReplay {
  private readonly rm: Kysely<ReadModelDatabase>
  private model: EtaModel
  private log: string
  private positions: string = POSITIONS_START
  private journalSeq = 0
  /** Events read past the run being replayed, kept for the next one. */
  private ahead: RecordedEvent[] = []
  private aheadCheckpoint: string | undefined
  private pending = 0
  events = 0
  batches = 0

  constructor(private readonly db: Kysely<any>, private store: EventStore, private readonly schema: string, private readonly settings: EtaSettings) {
    this.rm = readModelIn(db, schema)
    this.model = new EtaModel(settings)
    this.log = store.startPosition
  }

  /** Replays what the journal holds (the bulk, beside the live engine); returns how many entries. */
  async followJournal(db: Kysely<any> = this.db): Promise<number> {
    let n = 0
    for (;;) {
      const entries = await journalAfter(db, this.journalSeq, 1000)
      if (!entries.length) break
      for (const j of entries) {
        await this.positionsUpTo(db, j.positionsBefore)
        await this.eventsUpTo(j.logTo)
        if (j.tickAt !== null) {
          await prepare(this.rmOf(db), this.model, [], [], true)
          this.model.tick(j.tickAt)
        }
        this.journalSeq = j.seq
        n++
        await this.maybeFlush(db)
      }
    }
    await this.flush(db)
    return n
  }

  /**
   * Inside the swap transaction, the live engine's rounds held off: the rest of the journal, the
   * positions the live engine took after its last journalled round, then on as the engine would
   * (journalling its rounds) to the heads; the checkpoint is written with no owner, so the live
   * engine reloads its state from the swapped-in tables.
   */
  async finish(trx: Kysely<any>, tailStore: EventStore): Promise<void> {
    this.store = tailStore
    await takeEtaLock(trx)
    await this.followJournal(trx)
    const live = await readCheckpoint(readModelIn(trx, 'read_model'), 'read_model').catch(() => undefined)
    if (live) await this.positionsUpTo(trx, live.positions)
    const rm = this.rmOf(trx)
    for (;;) {
      const read = await this.nextEvents(1000)
      const page = await batchesAfter(trx, this.positions, 5000)
      if (!read.events.length && !page.batches.length) break
      await prepare(rm, this.model, read.events, page.batches, false)
      this.model.applyEvents(read.events)
      this.applyBatches(page.batches)
      if (read.events.length) await journal(trx, read.checkpoint, this.positions, null)
      this.log = read.checkpoint
      this.positions = page.cursor
      this.events += read.events.length
      await this.flush(trx)
    }
    await this.flush(trx)
    const to: Checkpoint = { log: this.log, positions: this.positions }
    await rm.insertInto('eta_checkpoint').values({ name: ENGINE, log_checkpoint: to.log, positions_checkpoint: to.positions, owner: null, lease_until: null })
      .onConflict((oc) => oc.column('name').doUpdateSet({ log_checkpoint: to.log, positions_checkpoint: to.positions, owner: null, lease_until: null }))
      .execute()
  }

  private rmOf(db: Kysely<any>): Kysely<ReadModelDatabase> {
    return db === this.db ? this.rm : readModelIn(db, this.schema)
  }

  private async positionsUpTo(db: Kysely<any>, to: string): Promise<void> {
    const batches = await batchesBetween(db, this.positions, to)
    this.positions = to
    for (let i = 0; i < batches.length; i += FLUSH_EVERY) {
      const part = batches.slice(i, i + FLUSH_EVERY)
      await prepare(this.rmOf(db), this.model, [], part, false)
      this.applyBatches(part)
      await this.flush(db)
    }
  }

  private applyBatches(batches: readonly PositionBatch[]): void {
    for (const b of batches) this.model.applyPositions(b.driverId, { point: { lat: b.newest.lat, lng: b.newest.lng }, recordedAt: b.newest.recordedAt }, b.receivedAt)
    this.batches += batches.length
  }

  /** The events after where the replay stands up to `logTo` (one run: the live engine's round). */
  private async eventsUpTo(logTo: string): Promise<void> {
    const run: RecordedEvent[] = []
    while (this.store.comparePositions(this.log, logTo) < 0) {
      const read = await this.nextEvents(1000)
      if (!read.events.length) break
      let last = this.log
      for (const [i, e] of read.events.entries()) {
        if (this.store.comparePositions(e.position, logTo) > 0) {
          this.ahead = read.events.slice(i)
          this.aheadCheckpoint = read.checkpoint
          break
        }
        run.push(e)
        last = e.position
      }
      this.log = this.ahead.length ? last : read.checkpoint
      if (this.ahead.length) break
    }
    this.log = logTo
    if (!run.length) return
    await prepare(this.rm, this.model, run, [], false)
    this.model.applyEvents(run)
    this.events += run.length
    this.pending += run.length
  }

  private async nextEvents(limit: number): Promise<{ events: RecordedEvent[]; checkpoint: string }> {
    if (this.ahead.length) {
      const events = this.ahead
      const checkpoint = this.aheadCheckpoint!
      this.ahead = []
      this.aheadCheckpoint = undefined
      return { events, checkpoint }
    }
    return this.store.readAll(this.log, limit)
  }

  private async maybeFlush(db: Kysely<any>): Promise<void> {
    if (++this.pending >= FLUSH_EVERY) await this.flush(db)
  }

  private async flush(db: Kysely<any>): Promise<void> {
    this.pending = 0
    const out = this.model.drain()
    if (out.routes.length || out.tasks.length || out.history.length || out.fixes.length || out.feed.length) await writeOutput(this.rmOf(db), this.schema, out)
    // What is written is the state: holding it all would grow with the log.
    if (this.model.tasks.size > 20_000) this.model.evict()
  }
}

/** A fresh model for the replay (exported for tests that compare a replay with the live engine). */
export const replayModel = (settings: EtaSettings) => new EtaModel(settings)
