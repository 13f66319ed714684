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
 * The carrier-facing reactions of an API process: webhooks (reader + dispatcher) and the
 * shipment expiry timer. Safe to run in every process: the reader is single-writer by advisory
 * lock, deliveries and timers are claimed with SKIP LOCKED.
 */
export async function startCarrierProcesses(platform: Platform, deps: ReactionDeps): Promise<{ stop(): Promise<void> }> {
  const notifier = new Notifier(platform, { logger: deps.logger })
  const expiry = new ShipmentExpiry(platform, { logger: deps.logger })
  notifier.start()
  expiry.start()
  return { async stop() { await Promise.all([notifier.stop(), expiry.stop()]) } }
}
