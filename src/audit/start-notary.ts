import type { Platform } from '../platform.js'
import { auditOriginOf } from './log-origin.js'
import { Notary, type NotaryLogger, type NotaryOptions } from './notary.js'
import { parseWitnesses } from './witness/witness-client.js'
import { Witnessing } from './witness/witnessing.js'

/**
 * The notary of this process's background work: a pool of its own for its writes, the process's tail of the log read as stored (its reads shared with the projector
 * and the relay), the configured key and signing rhythm, and the configured witnesses. It seals only while it holds the lease; in
 * every other process it stands by to take over.
 */
export function startNotary(platform: Platform, logger: NotaryLogger, opts: NotaryOptions = {}): Notary {
  const db = platform.database.dedicated('notary', 2)
  const witnesses = parseWitnesses(platform.config.auditWitnesses)
  const notary = new Notary(db, platform.logAsStored, platform.notaryKey, {
    logger,
    signIntervalMs: platform.config.notarySignIntervalMs,
    signEveryEvents: platform.config.notarySignEveryEvents,
    ...(witnesses.length > 0 ? { witnessing: new Witnessing(witnesses, auditOriginOf(platform.config), platform.notaryKey) } : {}),
    ...opts,
  })
  notary.start()
  return notary
}
