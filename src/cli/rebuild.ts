import cliProgress from 'cli-progress'
import { sql } from 'kysely'
import { allProjections } from '../../projections/index.js'
import type { Projection } from '../../projections/projection.js'
import { ProjectionRunner, projectionLockName } from '../../projections/runner.js'
import type { DatabaseHandle } from '../infrastructure/database/connection.js'
import { migrateReadModels, READ_MODEL_SCHEMA } from '../infrastructure/database/migrate.js'
import { copyReadModelGrants } from '../infrastructure/database/read-model-grants.js'
import type { EventStore } from '../infrastructure/event-store/event-store.js'
import { PostgresEventStore } from '../infrastructure/event-store/postgres-event-store.js'
import { isWrapping } from '../infrastructure/event-store/wrapping.js'
import { upcasters } from '../infrastructure/event-store/upcasting.js'
import { EtaReplay } from '../etas/eta-replay.js'
import type { EtaSettings } from '../etas/eta-model.js'
import { loadConfig } from '../config.js'

export const REBUILD_SCHEMA = `${READ_MODEL_SCHEMA}_rebuild`
const OLD_SCHEMA = `${READ_MODEL_SCHEMA}_old`

export interface RebuildOptions {
  database: DatabaseHandle
  store: EventStore
  projections?: Projection[]
  batchSize?: number
  /** Draw a cli-progress bar on stderr (the CLI); off in tests and benchmarks. */
  progress?: boolean
  /** Build and fill the fresh schema but leave the live one in place (benchmarks, dry runs). */
  swap?: boolean
  /** The ETA engine's settings, as the server runs it (default: the environment's ROUTING_SPEED_KMH, DELAY_THRESHOLD_MINUTES). */
  etas?: EtaSettings
}

export interface RebuildResult {
  /** Events read from the log, per projection (every projection replays the whole log). */
  events: number
  seconds: number
  eventsPerSecond: number
  /** Events applied inside the swap transaction, after the bulk replay. */
  tailEvents: number
  /** Grants on the live schema, its tables and columns given again on the swapped-in ones. */
  grantsKept: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The whole log's size, for the progress bar; undefined when the store cannot count it. */
const countEvents = async (store: EventStore): Promise<number | undefined> =>
  (await store.eventsAfter(store.startPosition)) ?? undefined

/**
 * Replays the whole log into a fresh schema and swaps it in (DESIGN §2, "rebuild"): the bulk of
 * the replay runs beside the live projector (its own lock names, its own checkpoints); the swap
 * is one transaction that takes the live projections' locks, applies the tail that arrived
 * meanwhile, and renames the schemas, so readers see either the old tables or the new ones.
 */
function etaSettingsFromEnvironment(): EtaSettings {
  const c = loadConfig()
  return { speedKmh: c.routingSpeedKmh, delayThresholdMs: c.delayThresholdMinutes * 60_000 }
}

export async function rebuildReadModels(opts: RebuildOptions): Promise<RebuildResult> {
  const { database, store } = opts
  const { db } = database
  const projections = opts.projections ?? allProjections
  const batchSize = opts.batchSize ?? 10_000

  await sql`drop schema if exists ${sql.id(REBUILD_SCHEMA)} cascade`.execute(db)
  await migrateReadModels(db, REBUILD_SCHEMA)

  const total = await countEvents(store)
  const bar = opts.progress
    ? new cliProgress.SingleBar({
      format: 'rebuild |{bar}| {percentage}% | {value}/{total} events | {speed} events/s | {duration_formatted}',
      hideCursor: true,
    }, cliProgress.Presets.shades_classic)
    : undefined
  const done = new Map<string, number>()
  const started = process.hrtime.bigint()
  const elapsed = () => Number(process.hrtime.bigint() - started) / 1e9
  const progressed = () => Math.floor([...done.values()].reduce((a, b) => a + b, 0) / Math.max(1, projections.length))
  bar?.start(total ?? 0, 0, { speed: 0 })

  const runner = new ProjectionRunner(db, store, projections, {
    schema: REBUILD_SCHEMA,
    batchSize,
    onBatch: (name, n) => {
      done.set(name, (done.get(name) ?? 0) + n)
      if (bar) {
        const value = progressed()
        if (total === undefined || value > total) bar.setTotal(value)
        bar.update(value, { speed: Math.round(value / Math.max(elapsed(), 1e-3)) })
      }
    },
  })
  // Catch up to the head as it was seen; a few passes, since writers keep appending meanwhile.
  for (let pass = 0; pass < 20 && await runner.catchUp(); pass++) await sleep(20)
  // The ETA tables follow positions too: replayed by the engine's journal, not by the runner (src/etas/eta-replay.ts).
  const etas = new EtaReplay(db, store, REBUILD_SCHEMA, opts.etas ?? etaSettingsFromEnvironment())
  if (opts.projections === undefined) await etas.followJournal()
  const bulk = progressed()
  const seconds = elapsed()
  bar?.stop()

  let tailEvents = 0
  let grantsKept = 0
  if (opts.swap !== false) {
    // The fresh tables have no grants of their own: the analysts' (npm run analyst-role) and any made
    // by hand are given again before the swap. Not inside the swap's transaction: reading every
    // column's grants there held the live engines back long enough to change what they wrote next
    // (test/etas/eta-rebuild.test.ts). A grant made between this and the swap is not carried over.
    const live = await sql`select 1 from pg_namespace where nspname = ${READ_MODEL_SCHEMA}`.execute(db)
    if (live.rows.length > 0) grantsKept = await db.transaction().execute((trx) => copyReadModelGrants(trx, READ_MODEL_SCHEMA, REBUILD_SCHEMA))
    await db.transaction().execute(async (trx) => {
      // Wait for the live projector's current batch; it skips its turn (try-lock) until we commit.
      for (const p of projections) {
        await sql`select pg_advisory_xact_lock(hashtextextended(${projectionLockName(p.name)}, 0))`.execute(trx)
      }
      // The tail is read through the transaction, on the connection that holds the projections' locks.
      const throughTrx = (s: EventStore): EventStore =>
        isWrapping(s) ? s.rewrap(throughTrx(s.wrapped)) : s instanceof PostgresEventStore ? new PostgresEventStore(trx, upcasters) : s
      const tailStore = throughTrx(store)
      const tail = new ProjectionRunner(trx, tailStore, projections, {
        schema: REBUILD_SCHEMA,
        batchSize,
        onBatch: (_name, n) => { tailEvents += n },
      })
      // Until caught up, or until an open transaction elsewhere in the cluster (the snapshot xmin)
      // hides the rest: the live projector, running on the swapped-in schema, carries on from there.
      for (let seen = -1; seen !== tailEvents;) {
        seen = tailEvents
        if (!(await tail.catchUp())) break
      }
      if (opts.projections === undefined) await etas.finish(trx, tailStore)
      const live = await sql`select 1 from pg_namespace where nspname = ${READ_MODEL_SCHEMA}`.execute(trx)
      if (live.rows.length > 0) {
        await sql`drop schema if exists ${sql.id(OLD_SCHEMA)} cascade`.execute(trx)
        await sql`alter schema ${sql.id(READ_MODEL_SCHEMA)} rename to ${sql.id(OLD_SCHEMA)}`.execute(trx)
      }
      await sql`alter schema ${sql.id(REBUILD_SCHEMA)} rename to ${sql.id(READ_MODEL_SCHEMA)}`.execute(trx)
      if (live.rows.length > 0) await sql`drop schema ${sql.id(OLD_SCHEMA)} cascade`.execute(trx)
    })
    tailEvents = Math.floor(tailEvents / Math.max(1, projections.length))
  }
  return { events: bulk, seconds, eventsPerSecond: bulk / Math.max(seconds, 1e-9), tailEvents, grantsKept }
}
