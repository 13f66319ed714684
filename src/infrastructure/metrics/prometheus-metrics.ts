import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ClusterFigures, Metrics } from './metrics.js'

// Seconds; the API's requests are mostly 2–50 ms, appends 0.5–20 ms.
const HTTP_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/**
 * Metrics on a registry of its own (not prom-client's global one), so that several apps in one
 * process (tests, two API instances) never share or double-register a series.
 */
/**
 * A counter fed from a total read elsewhere (the runner's parked count, the database's redeliveries):
 * each scrape adds what the total grew by since the last one.
 */
function counterOf<L extends string>(counter: Counter<L>) {
  const last = new Map<string, number>()
  return {
    set(labels: Record<L, string>, total: number) {
      const key = JSON.stringify(labels)
      const grew = total - (last.get(key) ?? 0)
      if (grew > 0) counter.inc(labels, grew)
      else if (!last.has(key)) counter.inc(labels, 0) // the series exists from the first scrape, at 0
      last.set(key, Math.max(total, last.get(key) ?? 0))
    },
  }
}

export function prometheusMetrics(opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry })
  const reg = { registers: [registry] }

  const http = new Histogram({
    ...reg, name: 'http_request_duration_seconds', help: 'HTTP requests by route pattern, method and status code.',
    labelNames: ['route', 'method', 'status_code'], buckets: HTTP_BUCKETS,
  })
  const append = new Histogram({
    ...reg, name: 'event_store_append_duration_seconds', help: 'Event store writes (append and atomic multi-stream appends) by outcome.',
    labelNames: ['outcome'], buckets: APPEND_BUCKETS,
  })
  const webhooks = new Counter({
    ...reg, name: 'webhook_deliveries_total', help: 'Webhook calls made by this process, by target (carrier or organization webhook) and outcome.',
    labelNames: ['target', 'outcome'],
  })

  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ ...reg, name, help, labelNames })
  const projectionLag = gauge('projection_lag_events', 'Events in the log after the projection\'s checkpoint.', ['projection'])
  const projectionParked = counterOf(new Counter({ ...reg, name: 'projection_parked_events_total', help: 'Events a projection could not apply and parked, since this process started.', labelNames: ['projection'] }))
  const busUp = gauge('bus_up', 'Whether the bus answered (1) or not (0).', ['adapter'])
  const relayLag = gauge('bus_relay_lag_events', 'Events in the log not yet published by the relay.', ['relay'])
  const relayUp = gauge('bus_relay_active', 'Whether some process holds the relay lease (1) or none does (0).', ['relay'])
  const consumerLag = gauge('bus_consumer_lag_events', 'Events behind the log head for a consumer: unacknowledged messages plus the relay lag.', ['consumer'])
  const consumerPending = gauge('bus_consumer_pending_messages', 'Messages published to a consumer and not yet acknowledged (waiting, delayed or in flight).', ['consumer'])
  const consumerInFlight = gauge('bus_consumer_in_flight_messages', 'Messages delivered to a consumer and not yet settled.', ['consumer'])
  const redeliveries = counterOf(new Counter({ ...reg, name: 'bus_consumer_redeliveries_total', help: 'Deliveries after the first (retries and ack-wait expiries), all processes.', labelNames: ['consumer'] }))
  const deadLetters = gauge('bus_consumer_dead_letters', 'Dead letters of a consumer not replayed yet.', ['consumer'])
  const timersScheduled = gauge('bus_timers_scheduled', 'Timers waiting to fire.')
  const timersOverdue = gauge('bus_timers_overdue', 'Timers past their time and not yet published.')
  const timersOldest = gauge('bus_timers_oldest_overdue_seconds', 'How late the most overdue timer is.')
  const scraped = [projectionLag, busUp, relayLag, relayUp, consumerLag, consumerPending, consumerInFlight, deadLetters]

  const moduleGauges = new Map<string, Gauge>()
  function record(f: ClusterFigures): void {
    // Series of a projection or consumer that is gone must not linger with their last value.
    for (const g of scraped) g.reset()
    for (const g of moduleGauges.values()) g.reset()
    for (const m of f.gauges ?? []) {
      const g = moduleGauges.get(m.name) ?? moduleGauges.set(m.name, gauge(m.name, m.help)).get(m.name)!
      g.set(m.value)
    }
    for (const p of f.projections) {
      if (p.lag !== null) projectionLag.set({ projection: p.name }, p.lag)
      projectionParked.set({ projection: p.name }, p.parked)
    }
    const b = f.bus
    if (!b) return
    busUp.set({ adapter: b.adapter }, b.up ? 1 : 0)
    for (const r of b.relays) {
      relayLag.set({ relay: r.name }, r.lag)
      relayUp.set({ relay: r.name }, r.active ? 1 : 0)
    }
    for (const c of b.consumers) {
      const l = { consumer: c.name }
      consumerLag.set(l, c.lag)
      consumerPending.set(l, c.pending)
      consumerInFlight.set(l, c.inFlight)
      redeliveries.set(l, c.redeliveries)
      deadLetters.set(l, c.deadLetters)
    }
    timersScheduled.set(b.timers.scheduled)
    timersOverdue.set(b.timers.overdue)
    timersOldest.set(b.timers.oldestOverdueSeconds)
  }

  return {
    httpRequest: (route, method, status, seconds) => http.observe({ route, method, status_code: String(status) }, seconds),
    eventStoreAppend: (seconds, outcome) => append.observe({ outcome }, seconds),
    webhookDelivery: (target, outcome) => webhooks.inc({ target, outcome }),
    async exposition(figures) {
      record(figures)
      return { contentType: registry.contentType, text: await registry.metrics() }
    },
  }
}
