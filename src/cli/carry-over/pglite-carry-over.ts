import { existsSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import cliProgress from 'cli-progress'
import { sql } from 'kysely'
import type { DatabaseHandle } from '../../infrastructure/database/connection.js'
import { kyselySide, pgliteSide, ident, type SqlSide } from './carry-over-sides.js'
import { carriedDifferences, readModelDifferences } from './carry-over-checks.js'
import {
  CarryOverRefused, copyTable, outOfOrder, planTables, rowCount, sequenceStates, setSequences,
  type CarriedTable, type SequenceState,
} from './carry-over-tables.js'
import { READ_MODEL_SCHEMA } from '../../infrastructure/database/migrate.js'
import { PostgresEventStore } from '../../infrastructure/event-store/postgres-event-store.js'
import { upcasters } from '../../infrastructure/event-store/upcasting.js'
import { rebuildReadModels, REBUILD_SCHEMA } from '../rebuild.js'
import type { EtaSettings } from '../../etas/eta-model.js'

export { CarryOverRefused } from './carry-over-tables.js'

/** The copy was made but does not match the old database: the target was emptied again and the old folder left as it was. */
export class CarryOverFailed extends Error {
  override name = 'CarryOverFailed'
  constructor(readonly differences: string[]) {
    super(`the carried-over database differs from the old one, so the old one was kept and the new one emptied again:\n  ${differences.join('\n  ')}`)
  }
}

export interface CarryOverOptions {
  /** The old embedded database's folder (`${DATA_DIR}/pglite`). */
  pgliteDir: string
  /** A migrated PostgreSQL database whose log is empty. */
  target: DatabaseHandle
  /** Draw cli-progress bars on stderr (copy, then the rebuild's). */
  progress?: boolean
  log?: (line: string) => void
  /** Rows per batch of the copy (default 5000). */
  batchSize?: number
  /** The ETA engine's settings, as the old server ran it (default: the environment's). */
  etas?: EtaSettings
}

export interface CarryOverResult {
  events: number
  /** Rows copied, every carried table (the log included). */
  rows: number
  copySeconds: number
  rebuildSeconds: number
  verifySeconds: number
  /** Events carried per second, copy + rebuild + verification. */
  eventsPerSecond: number
  /** Where the old folder is now. */
  movedTo: string
}

const seconds = (from: bigint) => Number(process.hrtime.bigint() - from) / 1e9

/**
 * Carries an old embedded PGlite database over into `target` (issue 34, docs/decisions.md
 * "Carrying PGlite over"): its log and every other table of `public`, in one transaction with
 * positions and sequences kept; then the read models rebuilt from the carried log; then both
 * compared. Only when they match is the old folder renamed (never deleted). When they do not, or
 * anything fails after the copy, the target is emptied again so that a retry starts clean.
 */
export async function carryOverPglite(opts: CarryOverOptions): Promise<CarryOverResult> {
  const log = opts.log ?? (() => {})
  // PGlite would make an empty database of a missing folder.
  if (!existsSync(join(opts.pgliteDir, 'PG_VERSION'))) throw new CarryOverRefused(`${opts.pgliteDir} holds no embedded database`)
  const targetSide = kyselySide(opts.target.db)
  const events = await rowCount(targetSide, 'es_events')
  if (events > 0) throw new CarryOverRefused(`the target database already has ${events} events: an old log is never mixed into another one`)
  const { PGlite } = await import('@electric-sql/pglite')
  const client = new PGlite(opts.pgliteDir)
  await client.waitReady
  const source = pgliteSide(client)
  let copied: { tables: CarriedTable[]; before: Map<string, SequenceState> } | undefined
  let result: Omit<CarryOverResult, 'movedTo'>
  try {
    // Every timestamp compared in one form (to_jsonb writes them in the session's time zone).
    await source.rows(`set timezone to 'UTC'`)
    const tables = await planTables(source, targetSide)
    for (const table of tables) {
      const n = await outOfOrder(source, table)
      if (n > 0) throw new CarryOverRefused(`${n} rows of public.${table.name} are in a different order by transaction than by ${table.orderedBy!.by}: their order could not be kept`)
    }
    const counts = new Map<string, number>()
    for (const t of tables) counts.set(t.name, await rowCount(source, t.name))
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    const sourceEvents = counts.get('es_events') ?? 0
    log(`carrying over the embedded database in ${opts.pgliteDir}: ${sourceEvents} events, ${total} rows in ${tables.length} tables`)

    const before = await sequenceStates(targetSide)
    const copyStarted = process.hrtime.bigint()
    const bar = opts.progress
      ? new cliProgress.SingleBar({ format: 'copy    |{bar}| {percentage}% | {value}/{total} rows | {duration_formatted}', hideCursor: true }, cliProgress.Presets.shades_classic)
      : undefined
    bar?.start(total, 0)
    let done = 0
    const copyTx = await opts.target.db.transaction().execute(async (trx) => {
      const side = kyselySide(trx)
      // No writer of the target may slip rows in beside the copy (a server started on it meanwhile).
      await sql`set local lock_timeout = '10s'`.execute(trx)
      await side.rows(`lock table ${tables.map((t) => `public.${ident(t.name)}`).join(', ')} in exclusive mode`)
      const busy: string[] = []
      for (const t of tables) if (await rowCount(side, t.name) > 0) busy.push(t.name)
      if (busy.length) throw new CarryOverRefused(`the target database already has rows in ${busy.join(', ')}: the old database is carried over into an empty one only`)
      const tx = (await side.rows<{ tx: string }>(`select pg_current_xact_id()::text as tx`))[0]!.tx
      for (const t of tables) {
        await copyTable(source, side, t, tx, opts.batchSize ?? 5000, (n) => { done += n; bar?.update(done) })
      }
      await setSequences(side, await sequenceStates(source))
      return tx
    }).finally(() => bar?.stop())
    copied = { tables, before }
    const copySeconds = seconds(copyStarted)
    // The copy is checked before the rebuild, which writes beside it (the ETA engine's journal).
    const copyCheckStarted = process.hrtime.bigint()
    const copyDifferences = await inUtc(opts.target, (side) => carriedDifferences(source, side, tables, copyTx))
    if (copyDifferences.length) throw new CarryOverFailed(copyDifferences)
    const copyCheckSeconds = seconds(copyCheckStarted)
    log(`copied ${total} rows in ${copySeconds.toFixed(2)} s, the same as the old ones; rebuilding the read models from the carried log`)

    const rebuildStarted = process.hrtime.bigint()
    const store = new PostgresEventStore(opts.target.db, upcasters)
    try {
      await rebuildReadModels({ database: opts.target, store, progress: opts.progress ?? false, ...(opts.etas ? { etas: opts.etas } : {}) })
    } finally {
      await store.close()
    }
    const rebuildSeconds = seconds(rebuildStarted)

    const verifyStarted = process.hrtime.bigint()
    const { differences, notes } = await inUtc(opts.target, (side) => readModelDifferences(source, side))
    if (differences.length) throw new CarryOverFailed(differences)
    for (const note of notes) log(note)
    const verifySeconds = copyCheckSeconds + seconds(verifyStarted)
    log(`verified: the same ${sourceEvents} events in the same order, the same rows in every carried table and read model`)
    result = {
      events: sourceEvents, rows: total, copySeconds, rebuildSeconds, verifySeconds,
      eventsPerSecond: sourceEvents / Math.max(copySeconds + rebuildSeconds + verifySeconds, 1e-9),
    }
  } catch (err) {
    if (copied) await emptyAgain(opts.target, copied.tables, copied.before)
    throw err
  } finally {
    await client.close()
  }
  const movedTo = asideName(opts.pgliteDir)
  renameSync(opts.pgliteDir, movedTo)
  log(`the old embedded database was moved to ${movedTo}; it is no longer used and may be deleted`)
  return { ...result, movedTo }
}

/** Reads of the target with timestamps in UTC, as the old side's (to_jsonb writes them in the session's time zone). */
const inUtc = <T>(target: DatabaseHandle, read: (side: SqlSide) => Promise<T>): Promise<T> =>
  target.db.transaction().execute(async (trx) => {
    await sql`set local timezone to 'UTC'`.execute(trx)
    return read(kyselySide(trx))
  })

/** `<dir>.carried-over`, or with the time when an earlier carry-over left one there. */
function asideName(dir: string): string {
  const plain = `${dir.replace(/\/+$/, '')}.carried-over`
  return existsSync(plain) ? `${plain}-${new Date().toISOString().replace(/[:.]/g, '-')}` : plain
}

/** Back to the empty, migrated database the carry-over found: carried tables and read models emptied, sequences where they were. */
async function emptyAgain(target: DatabaseHandle, tables: CarriedTable[], before: Map<string, SequenceState>): Promise<void> {
  await target.db.transaction().execute(async (trx) => {
    const side: SqlSide = kyselySide(trx)
    await side.rows(`truncate table ${tables.map((t) => `public.${ident(t.name)}`).join(', ')}`)
    await setSequences(side, before)
    await sql`drop schema if exists ${sql.id(REBUILD_SCHEMA)} cascade`.execute(trx)
    const readModels = await side.rows<{ t: string }>(`
      select tablename as t from pg_tables where schemaname = '${READ_MODEL_SCHEMA}' and tablename not in ('kysely_migration', 'kysely_migration_lock')`)
    if (readModels.length) await side.rows(`truncate table ${readModels.map((r) => `${READ_MODEL_SCHEMA}.${ident(r.t)}`).join(', ')}`)
  })
}

export interface CarryOverLogger {
  info(obj: object | string, msg?: string): void
  warn(obj: object, msg: string): void
}

/**
 * At the platform's start: carries `${dataDir}/pglite` over into `database` when the folder is
 * there and the database's log is empty; otherwise nothing (a database that already has events
 * is never mixed with it: `npm run carry-over-pglite` says so when asked explicitly).
 */
export async function carryOverIfPresent(
  config: { dataDir: string; eventStoreUrl?: string | undefined; routingSpeedKmh: number; delayThresholdMinutes: number },
  database: DatabaseHandle,
  logger?: CarryOverLogger,
): Promise<CarryOverResult | undefined> {
  const pgliteDir = join(config.dataDir, 'pglite')
  if (!existsSync(pgliteDir)) return undefined
  if (config.eventStoreUrl) {
    logger?.warn({ pglite_dir: pgliteDir }, 'an old embedded PGlite database is present, but the log lives in EventStoreDB (EVENTSTORE_URL): it is not carried over')
    return undefined
  }
  const events = await rowCount(kyselySide(database.db), 'es_events')
  if (events > 0) {
    logger?.warn({ pglite_dir: pgliteDir, events }, 'an old embedded PGlite database is present, but this database already has events: it is not carried over')
    return undefined
  }
  return carryOverPglite({
    pgliteDir,
    target: database,
    progress: process.stderr.isTTY === true,
    log: (line) => logger ? logger.info({ pglite_dir: pgliteDir }, line) : process.stdout.write(`${line}\n`),
    etas: { speedKmh: config.routingSpeedKmh, delayThresholdMs: config.delayThresholdMinutes * 60_000 },
  })
}
