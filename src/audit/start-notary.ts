import type { Platform } from '../platform.js'
import { Notary, type NotaryLogger, type NotaryOptions } from './notary.js'

/**
 * The notary of this process's background work: a pool of its own for its writes, the process's tail of the log read as stored (its reads shared with the projector
 * and the relay), the configured key and signing rhythm. It seals only while it holds the lease; in
 * every other process it stands by to take over.
 */
export function startNotary(platform: Platform, logger: NotaryLogger, opts: NotaryOptions = {}): Notary {
  const db = platform.database.dedicated('notary', 2)
  const notary = new Notary(db, platform.logAsStored, platform.notaryKey, {
    logger,
    signIntervalMs: platform.config.notarySignIntervalMs,
    signEveryEvents: platform.config.notarySignEveryEvents,
    ...opts,
  })
  notary.start()
  return notary
}
