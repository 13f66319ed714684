import { sql } from 'kysely'
import type { RecordedEvent } from '../src/infrastructure/event-store/event-store.js'
import { READ_MODEL_SCHEMA } from '../src/infrastructure/database/migrate.js'
import { encodeChangeNotice, READ_MODEL_CHANGED_CHANNEL } from './change-notices.js'
import type { Projection, ProjectionContext } from './projection.js'

/**
 * One round of the projection runner: a batch for each projection that has one, read after its
 * checkpoint. Each projection has its own lock and compare-and-set checkpoint: one whose lock
 * another process holds, or whose checkpoint moved meanwhile, sits the round out.
 */
export interface Round {
  /** The schema the rows go to: `read_model`, or the fresh one during `rebuild`. */
  schema: string
  due: Projection[]
  /** A due projection's checkpoint as read, and where this round takes it. */
  from(p: Projection): string
  to(p: Projection): string
  /** The events of its batch the projection handles (maybe none: its checkpoint still moves). */
  wanted(p: Projection): RecordedEvent[]
  /** What the projections get; `changed` collects the round's notice. */
  ctx: ProjectionContext
  /** The last round failed: apply with savepoints, parking the events that fail. */
  careful: boolean
  /** The last round lost a checkpoint to another writer. */
  afterLoss: boolean
  /** The checkpoints table (oid) the checkpoints were read from; undefined when not known. */
  checkpointTable: number | undefined
  /**
   * The round's NOTIFY, once its writes are known (undefined when it changed nothing). Call it
   * right before the commit: it also gives this process its in-process notice.
   */
  noticeStatement(): ReturnType<typeof sql> | undefined
}

/** How a round reaches the database. */
export interface RoundWriter {
  /** False when it cannot write this round; the runner's next writer then does. */
  accepts(round: Round): boolean
  /**
   * Writes the round atomically: the compare-and-set of the due checkpoints (under each one's
   * try-lock), the projections' writes of those it won, the notice. Resolves to the projections
   * whose checkpoint moved; throws when a write failed (then nothing moved).
   */
  write(round: Round): Promise<Projection[]>
}

/**
 * The single-writer lock of one projection in one schema. The live schema keeps the plain name, so
 * a rebuild into another schema never contends with the live runner, and the swap can take the
 * live runner's locks by name.
 */
export const projectionLockName = (name: string, schema: string = READ_MODEL_SCHEMA): string =>
  schema === READ_MODEL_SCHEMA ? `projection:${name}` : `projection:${schema}:${name}`

/** The NOTIFY of a round's notice: sent with its writes, delivered at its commit. */
export const noticeSql = (payload: Parameters<typeof encodeChangeNotice>[0]) =>
  sql`select pg_notify(${READ_MODEL_CHANGED_CHANNEL}, ${encodeChangeNotice(payload)})`

/** `unnest` arguments of a round's compare-and-set: name, lock, previous and next checkpoint. */
export const casRows = (round: Round) => sql`unnest(
  ${round.due.map((p) => p.name)}::text[], ${round.due.map((p) => projectionLockName(p.name, round.schema))}::text[],
  ${round.due.map((p) => round.from(p))}::text[], ${round.due.map((p) => round.to(p))}::text[]) as v(name, lock, prev, next)`
