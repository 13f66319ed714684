import type { Bus, BusLogger } from '../infrastructure/bus/bus.js'
import { createBus } from '../infrastructure/bus/create-bus.js'
import type { Platform } from '../platform.js'
import { Relay } from './relay.js'
import { Timers } from './timers.js'
import { collectBusMetrics } from './metrics.js'
import { pruneProcessedMessages } from './idempotent-consumer.js'
import { startCarrierProcesses } from './carrier-processes.js'
import type { Notary } from '../audit/notary.js'
import { startNotary } from '../audit/start-notary.js'
import type { EtaEngine } from '../etas/eta-engine.js'
import { etaEngineOf } from '../etas/start-eta-engine.js'
import { startPositionPruning } from '../positions/pruning.js'

/** What an API process runs beside the HTTP server: the bus, the relay, timers and the reactions on them. */
export interface Background {
  bus: Bus
  relay: Relay
  timers: Timers
  /** Seals the log into the audit Merkle tree (active in one process at a time); none with NOTARY_ROLE=off. */
  notary: Notary | undefined
  /** Keeps the ETAs from the log and drivers' positions (active in one process at a time). */
  etas: EtaEngine
  metrics(): ReturnType<typeof collectBusMetrics>
  stop(): Promise<void>
}

const PROCESSED_MESSAGES_KEPT_MS = 30 * 24 * 3600 * 1000

export interface BackgroundOptions {
  /** Tests sharing one nats-server give each database its own stream and subject prefix. */
  nats?: { streamName?: string; subjectPrefix?: string }
}

export async function startBackground(platform: Platform, logger: BusLogger, opts: BackgroundOptions = {}): Promise<Background> {
  const db = platform.database
  const { natsStream, natsSubjectPrefix } = platform.config
  const nats = opts.nats ?? { streamName: natsStream, ...(natsSubjectPrefix ? { subjectPrefix: natsSubjectPrefix } : {}) }
  const bus = await createBus({ natsUrl: platform.config.natsUrl, db, logger, nats: { ...nats, replicas: platform.config.natsStreamReplicas } })
  const relay = new Relay(db.dedicated('relay', 1), platform.log, bus, { logger })
  const timers = new Timers(db.db, bus, { logger })
  await relay.start()
  const notary = platform.config.notaryRole === 'off' ? undefined : startNotary(platform, logger)
  const etas = etaEngineOf(platform, logger)
  await etas.start()
  const stopPruning = startPositionPruning(platform, logger)
  // This process projects its own appends at once and, while its relay holds the lease, publishes
  // them too: a NOTIFY would only send other processes' projectors racing for the same rounds.
  // (Unless another process's notary seals: it must hear of them.)
  const uncover = platform.appendNotices.coveredBy(() => relay.isActive && platform.projections.isRunning && (notary?.isActive ?? false) && etas.isActive)
  await timers.start()
  const reactions = await startCarrierProcesses(platform, { bus, timers, logger })
  const prune = setInterval(() => {
    pruneProcessedMessages(db.db, PROCESSED_MESSAGES_KEPT_MS).catch((err) => logger.warn({ err }, 'pruning processed messages failed'))
  }, 3600_000)
  prune.unref()
  const background: Background = {
    bus, relay, timers, notary, etas,
    metrics: () => collectBusMetrics(db.db, bus),
    async stop() {
      clearInterval(prune)
      stopPruning()
      await etas.stop()
      await notary?.stop()
      await reactions.stop()
      uncover()
      await relay.stop()
      await timers.stop()
      await bus.close({ graceMs: 2000 })
      platform.background = undefined
    },
  }
  platform.background = background
  return background
}
