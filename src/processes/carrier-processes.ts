import type { Bus, BusLogger } from '../infrastructure/bus/bus.js'
import type { Platform } from '../platform.js'
import type { Timers } from './timers.js'
import { Notifier } from './notifier.js'
import { ShipmentExpiry } from './shipment-expiry.js'

export interface ReactionDeps {
  bus: Bus
  timers: Timers
  logger: BusLogger
}

/**
 * The carrier-facing reactions of an API process, all on the bus: the notifier's intake consumer
 * plus its webhook dispatcher, and the shipment expiry (timer scheduling and the expire command).
 * Safe to run in every process: durable consumers are shared by name, the intake and scheduling are
 * idempotent per message, and outbox rows and timers are claimed with SKIP LOCKED.
 */
export async function startCarrierProcesses(platform: Platform, deps: ReactionDeps): Promise<{ notifier: Notifier; expiry: ShipmentExpiry; stop(): Promise<void> }> {
  const notifier = new Notifier(platform, { bus: deps.bus, logger: deps.logger })
  const expiry = new ShipmentExpiry(platform, deps)
  await notifier.start()
  await expiry.start()
  return { notifier, expiry, async stop() { await Promise.all([notifier.stop(), expiry.stop()]) } }
}
