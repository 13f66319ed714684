import type { ClusterFigures } from '../infrastructure/metrics/metrics.js'
import type { BackgroundFigures } from '../platform.js'

// The reaction side's figures as /ready and /metrics state them; the background collects them
// (`collectBusMetrics`), the health routes read them through `RunningBackground.metrics`.

/**
 * The `/ready` detail. Ready means the bus answers; a lagging or missing relay is reported but does
 * not take the process out of a load balancer (serving requests does not depend on it).
 */
export function busReadiness(m: BackgroundFigures): {
  ok: boolean; bus: string; relay_active: boolean; relay_lag: number
  consumers: Record<string, { lag: number; dead_letters: number; redeliveries: number }>; error?: string
} {
  return {
    ok: m.bus.reachable,
    bus: m.bus.kind,
    relay_active: m.relays.some(relayActive),
    relay_lag: m.relays.reduce((s, r) => s + Math.max(0, r.lag), 0),
    consumers: Object.fromEntries(m.consumers.map((c) => [c.name, { lag: c.lag, dead_letters: c.deadLetters, redeliveries: c.redeliveries }])),
    ...(m.bus.error ? { error: m.bus.error } : {}),
  }
}

/** A relay whose owner renewed its lease in time (by the database's clock: a dead owner's lapses within the lease). */
const relayActive = (r: BackgroundFigures['relays'][number]): boolean => r.live

/** The bus figures as the metrics port takes them. */
export function busFigures(m: BackgroundFigures): NonNullable<ClusterFigures['bus']> {
  return {
    adapter: m.bus.kind,
    up: m.bus.reachable,
    relays: m.relays.map((r) => ({ name: r.name, lag: r.lag, active: relayActive(r) })),
    consumers: m.consumers,
    timers: { scheduled: m.timers.scheduled, overdue: m.timers.overdue, oldestOverdueSeconds: m.timers.oldestOverdueMs / 1000 },
  }
}
