import type { Platform } from '../platform.js'
import type { BusLogger } from '../infrastructure/bus/bus.js'
import { EtaEngine } from './eta-engine.js'

/** The process's ETA engine (every process runs one; one at a time is active), on a pool of its own. */
export function etaEngineOf(platform: Platform, logger: BusLogger, opts: { tickMs?: number } = {}): EtaEngine {
  return new EtaEngine({
    db: platform.database.dedicated('eta', 2),
    log: platform.log,
    store: platform.store,
    listen: platform.database.listen,
    settings: { speedKmh: platform.config.routingSpeedKmh, delayThresholdMs: platform.config.delayThresholdMinutes * 60_000 },
    clock: platform.clock,
    ...(opts.tickMs !== undefined ? { tickMs: opts.tickMs } : {}),
    logger,
  })
}
