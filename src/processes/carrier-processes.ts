import type { Platform } from '../platform.js'
import { Notifier } from './notifier.js'
import { ShipmentExpiry } from './shipment-expiry.js'

/**
 * The carrier-facing background work of an API process: webhooks (reader + dispatcher) and the
 * shipment expiry timer. Safe to run in every process: the reader is single-writer by advisory
 * lock, deliveries and timers are claimed with SKIP LOCKED.
 */
export function startCarrierProcesses(platform: Platform, logger?: { error(obj: object, msg: string): void }): { stop(): Promise<void> } {
  const notifier = new Notifier(platform, logger ? { logger } : {})
  const expiry = new ShipmentExpiry(platform, logger ? { logger } : {})
  notifier.start()
  expiry.start()
  return { async stop() { await Promise.all([notifier.stop(), expiry.stop()]) } }
}
