import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { CompiledQuery, type Kysely } from 'kysely'
import type { Config } from './config.js'
import type { DatabaseHandle } from './infrastructure/database/connection.js'
import { openConfiguredDatabase } from './infrastructure/database/configured-database.js'
import type { EmbeddedServer } from './infrastructure/database/embedded/embedded-server.js'
import type { Database, ReadModelDatabase } from './infrastructure/database/database.js'
import { readModelIn } from '../projections/read-model-database.js'
import { migrateInfrastructure, migrateReadModels, READ_MODEL_SCHEMA } from './infrastructure/database/migrate.js'
import type { EventStore } from './infrastructure/event-store/event-store.js'
import { createEventStore } from './infrastructure/event-store/create-event-store.js'
import { readingThrough } from './infrastructure/event-store/read-through.js'
import { sharedLog } from './infrastructure/event-store/shared-log.js'
import { upcasters } from './infrastructure/event-store/upcasting.js'
import { AppendNotices } from './infrastructure/event-store/append-notices.js'
import { instrumented } from './infrastructure/event-store/instrumented-store.js'
import type { Metrics } from './infrastructure/metrics/metrics.js'
import { prometheusMetrics } from './infrastructure/metrics/prometheus-metrics.js'
import { ProjectionRunner, type RunnerLogger } from '../projections/runner.js'
import { allProjections } from '../projections/index.js'
import { ReadModelChanges } from '../projections/read-model-changes.js'
import type { CommandDeps } from './shared/command-handler.js'
import type { Geocoder } from './infrastructure/geo/geocoder.js'
import type { BlobStore } from './infrastructure/blobs/blob-store.js'
import { FilesystemBlobStore } from './infrastructure/blobs/filesystem-blob-store.js'
import { GazetteerGeocoder } from './infrastructure/geo/gazetteer-geocoder.js'
import { countrystatecityGazetteer } from './infrastructure/geo/countrystatecity-gazetteer.js'
import { KyselyAddedCities } from './infrastructure/geo/kysely-added-cities.js'
import type { PublishHealth } from './infrastructure/bus/publish-health.js'
import type { RateLimiter } from './infrastructure/rate-limit/rate-limiter.js'
import { PostgresRateLimiter } from './infrastructure/rate-limit/postgres-rate-limiter.js'
import { generatedNotaryKeyPem, type NotaryKey, notaryKeyFrom } from './audit/tree-head.js'
import type { WitnessingState } from './audit/witness/witnessing.js'
import { configuredNotaryKey, configuredNotaryKeyOrUnavailable, GENERATED_KEY_FILE } from './audit/configured-key.js'
import { errnoOf } from './shared/thrown.js'

/**
 * What the platform's readers (readiness, metrics, history proofs, shutdown) use of the background
 * processes: only this, so the platform names no process and the processes (which take the
 * platform) close no import circle through it. `startBackground` (src/processes/background.ts)
 * attaches one.
 */
export interface RunningBackground {
  relay: { readonly isActive: boolean }
  /** None with NOTARY_ROLE=off. `witnessing`: the witnesses' answers to this process's notary. */
  notary: { requestHead(): void; readonly witnessing: WitnessingState | undefined } | undefined
  /** For /ready: whether the bus answers, and how this process's publishes went (kept in memory). */
  bus: { ping(): Promise<void>; publishHealth(): PublishHealth }
  metrics(): Promise<BackgroundFigures>
  stop(): Promise<void>
}

/**
 * The reaction side's figures as /ready and /metrics read them (the cluster's: every figure comes
 * from the database or the bus). The background collects them with more beside
 * (`collectBusMetrics`, src/processes/metrics.ts).
 */
export interface BackgroundFigures {
  bus: { kind: string; reachable: boolean; error: string | undefined }
  relays: { name: string; lag: number; live: boolean }[]
  consumers: { name: string; pending: number; inFlight: number; lag: number; redeliveries: number; deadLetters: number }[]
  timers: { scheduled: number; overdue: number; oldestOverdueMs: number }
}

/** The platform's `db` and `rm` as one request reads them: cut by its statement timeout and its client's leaving. */
export interface RequestReadHandles {
  db: Kysely<Database>
  rm: Kysely<ReadModelDatabase>
}

/** Everything a request handler or a process may need; built once per process (composition root). */
export interface Platform {
  config: Config
  database: DatabaseHandle
  /** The embedded PostgreSQL this process runs (DATABASE_URL unset); `close` stops it after the pools. */
  embeddedServer?: EmbeddedServer | undefined
  db: Kysely<Database>
  /** Read models (schema `read_model`). */
  rm: Kysely<ReadModelDatabase>
  /**
   * Handles for one request's reads (REQUEST_STATEMENT_TIMEOUT_MS; request-reads.ts): their
   * statements are cut after the timeout and cancelled when `signal` aborts. Only a handler passes
   * them on, only to its own reads: nothing else (caches, background work) may hold them.
   */
  readsFor(signal: AbortSignal): RequestReadHandles
  store: EventStore
  /**
   * The log as this process's readers (projector, relay) tail it: one read serves all of them, on a
   * pool of its own so that request traffic cannot queue them (shared-log.ts).
   */
  log: EventStore
  /** The same tail as it was written, before any upcaster (what the notary seals). */
  logAsStored: EventStore
  /** How this process's appends wake readers elsewhere; the background quiets it while it covers them. */
  appendNotices: AppendNotices
  projections: ProjectionRunner
  /** The projection runner's change notices: this process's caches subscribe. */
  changes: ReadModelChanges
  commands: CommandDeps
  geocoder: Geocoder
  /** Labels, waybills, attachments (DESIGN §2 "Blobs"). */
  blobs: BlobStore
  /** Per-token request budgets (RATE_LIMIT_PER_MINUTE). */
  rateLimiter: RateLimiter
  adminToken: string
  secretsKey: Buffer
  /** Signs the audit log's tree heads; only its public half is ever shown. */
  notaryKey: NotaryKey
  clock: () => Date
  /** What this process records for /metrics (request times, appends, webhook outcomes). */
  metrics: Metrics
  /** The bus, relay, timers and reactions, when this process runs them (`startBackground`). */
  background?: RunningBackground | undefined
  close(): Promise<void>
}

export interface PlatformOptions {
  /** Tests pass an already-open database (one per test file). */
  database?: DatabaseHandle
  logger?: RunnerLogger & { info(obj: object | string, msg?: string): void }
  clock?: () => Date
  startProjections?: boolean
  /**
   * Run on the migrated database before anything reads it: `npm start` (src/main.ts) hands in the
   * carry-over of an old `${dataDir}/pglite` (`carryOverIfPresent`, src/cli/carry-over), which
   * rebuilds the read models and so stands above everything the platform is made of.
   */
  carryOver?: (config: Config, database: DatabaseHandle, logger: PlatformOptions['logger']) => Promise<unknown>
}

export async function createPlatform(config: Config, opts: PlatformOptions = {}): Promise<Platform> {
  const configured = opts.database
    ? { database: opts.database }
    : await openConfiguredDatabase(config, { role: 'platform', log: (msg) => opts.logger?.info(msg) })
  try {
    return await platformOn(config, configured.database, configured.embedded, opts)
  } catch (err) {
    // A start that fails (a migration, a key file) must not leave the embedded server running.
    if (!opts.database) await configured.database.close().catch(() => undefined)
    throw err
  }
}

async function platformOn(config: Config, database: DatabaseHandle, embeddedServer: EmbeddedServer | undefined, opts: PlatformOptions): Promise<Platform> {
  await migrateInfrastructure(database.db)
  await migrateReadModels(database.db)
  // Issue 34 point 2 (carry-over helper): an old `${dataDir}/pglite` is carried over into an empty
  // database before anything reads it.
  await opts.carryOver?.(config, database, opts.logger)
  const appendNotices = new AppendNotices(database.db)
  const metrics = prometheusMetrics()
  const store = instrumented(await createEventStore(config, database, appendNotices), metrics)
  const projectorDb = database.dedicated('projector', 3)
  const tail = sharedLog(readingThrough(store, database.dedicated('log', 2), { asStored: true }), upcasters)
  const log = tail.log
  const changes = new ReadModelChanges(database.listen)
  const projections = new ProjectionRunner(projectorDb, log, allProjections, {
    ...(opts.logger ? { logger: opts.logger } : {}),
    announce: (n) => changes.announce(n),
    // node-postgres sends a query without parameters by the simple protocol: several statements, one round trip.
    sendStatements: async (text: string) => { await projectorDb.executeQuery(CompiledQuery.raw(text)) },
  })
  if (opts.startProjections !== false) await projections.start()
  const adminToken = config.adminToken ?? persistedSecret(config, 'admin-token', () => `adm_${randomBytes(24).toString('base64url')}`, opts.logger)
  const secretsKey = Buffer.from(config.secretsKey ?? persistedSecret(config, 'secrets-key', () => randomBytes(32).toString('base64')), 'base64')
  if (secretsKey.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64-encoded')
  // NOTARY_ROLE=off: no key is generated here, and one configured is read only when asked for.
  let notaryKey = config.notaryRole === 'off' ? undefined : loadNotaryKey(config)
  const ownsDatabase = !opts.database
  const requestReads = database.requestReads({ statementTimeoutMs: config.requestStatementTimeoutMs })
  const platform: Platform = {
    config,
    database,
    embeddedServer,
    db: database.db,
    rm: readModelIn(database.db, READ_MODEL_SCHEMA),
    readsFor(signal) {
      const db = requestReads(signal)
      return { db, rm: readModelIn(db, READ_MODEL_SCHEMA) }
    },
    store,
    log,
    logAsStored: tail.asStored,
    appendNotices,
    projections,
    changes,
    commands: { store, projections, projectionWaitMs: config.projectionWaitMs },
    blobs: new FilesystemBlobStore(config.blobDir),
    geocoder: new GazetteerGeocoder(countrystatecityGazetteer(), new KyselyAddedCities(database.db as any)),
    // A PostgreSQL server may have several API processes, which must share one budget per token.
    rateLimiter: new PostgresRateLimiter(database.db),
    adminToken,
    secretsKey,
    get notaryKey() {
      notaryKey ??= configuredNotaryKeyOrUnavailable(config)
      return notaryKey
    },
    clock: opts.clock ?? clockAt(config.clockRate),
    metrics,
    async close() {
      await platform.background?.stop()
      await projections.stop()
      await changes.close()
      tail.close()
      await store.close()
      // Pools first, then (embedded) the server: its fast shutdown would cut their sessions.
      if (ownsDatabase) await database.close()
    },
  }
  return platform
}

/** The wall clock, or (CLOCK_RATE > 1, development only) one running that many times faster from now on. */
export function clockAt(rate: number): () => Date {
  if (rate === 1) return () => new Date()
  const origin = Date.now()
  return () => new Date(origin + (Date.now() - origin) * rate)
}

/** NOTARY_KEY, else the file NOTARY_KEY_FILE names, else a key generated into DATA_DIR (like SECRETS_KEY). */
function loadNotaryKey(config: Config): NotaryKey {
  return configuredNotaryKey(config)
    ?? notaryKeyFrom(persistedSecret(config, GENERATED_KEY_FILE, generatedNotaryKeyPem), `${config.dataDir}/${GENERATED_KEY_FILE}`)
}

/** A secret generated on first start, kept in DATA_DIR, printed once (DESIGN §3.1). */
function persistedSecret(config: Config, name: string, make: () => string, logger?: { info(obj: object | string, msg?: string): void }): string {
  const file = `${config.dataDir}/${name}`
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(config.dataDir, { recursive: true })
  const value = make()
  // Written aside and linked into place: two processes starting on one DATA_DIR keep the same one.
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  writeFileSync(aside, `${value}\n`, { mode: 0o600 })
  try {
    linkSync(aside, file)
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw err
    return readFileSync(file, 'utf8').trim()
  } finally {
    unlinkSync(aside)
  }
  if (name === 'admin-token') {
    const line = `Generated ADMIN_TOKEN (kept in ${file}, shown once): ${value}`
    if (logger) logger.info({ admin_token_file: file }, line)
    else process.stdout.write(`${line}\n`)
  }
  return value
}
