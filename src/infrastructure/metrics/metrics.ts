/** A module's figure at scrape time (the notary's lag, …): a gauge of that name. */
export interface ClusterGauge { name: string; help: string; value: number }

/** What is figured at scrape time from the database and the bus (cluster-wide, not this process's). */
export interface ClusterFigures {
  /** The modules' own figures (ReadinessCheck.gauges). */
  gauges?: ClusterGauge[]
  projections: { name: string; lag: number | null; parked: number }[]
  /** Present when this process runs the bus, relay and reactions. */
  bus?: {
    adapter: string
    up: boolean
    relays: { name: string; lag: number; active: boolean }[]
    consumers: { name: string; lag: number; pending: number; inFlight: number; redeliveries: number; deadLetters: number }[]
    timers: { scheduled: number; overdue: number; oldestOverdueSeconds: number }
  } | undefined
}

/**
 * The metrics port: what the code records as it runs, and the exposition `/metrics` serves. The
 * adapter beside it (prometheus-metrics.ts) is the only file that knows prom-client.
 */
export interface Metrics {
  httpRequest(route: string, method: string, status: number, seconds: number): void
  eventStoreAppend(seconds: number, outcome: 'ok' | 'conflict' | 'error'): void
  webhookDelivery(target: 'carrier' | 'webhook', outcome: 'delivered' | 'failed'): void
  exposition(figures: ClusterFigures): Promise<{ contentType: string; text: string }>
}
