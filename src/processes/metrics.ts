import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { Bus } from '../infrastructure/bus/bus.js'
import { countDeadLetters, redeliveryCounts } from '../infrastructure/bus/dead-letters.js'
import { relayStatus, type RelayStatus } from './relay.js'
import { timerStatus, type TimerStatus } from './timers.js'

export interface ConsumerMetrics {
  name: string
  /** Messages on the bus not yet acknowledged by this consumer (waiting, delayed, in flight). */
  pending: number
  inFlight: number
  /** Events behind the log head: `pending` plus the events the relay has not published yet. */
  lag: number
  /** Deliveries after the first, ever (all processes). */
  redeliveries: number
  /** Dead letters not replayed yet. */
  deadLetters: number
}

export interface BusMetrics {
  bus: { kind: Bus['kind']; reachable: boolean; error: string | undefined }
  relays: RelayStatus[]
  consumers: ConsumerMetrics[]
  timers: TimerStatus
}

/**
 * Reaction-side figures for /metrics and /ready. Every figure comes from the database or the
 * bus, so any API process reports the cluster's numbers, not only its own.
 */
export async function collectBusMetrics(db: Kysely<any>, bus: Bus, opts: { relayNames?: string[] } = {}): Promise<BusMetrics> {
  const relayNames = opts.relayNames ?? await knownRelays(db)
  const relays = await Promise.all(relayNames.map((n) => relayStatus(db, n)))
  const relayLag = relays.reduce((sum, r) => sum + Math.max(0, r.lag), 0)
  let reachable = true
  let error: string | undefined
  let stats: Awaited<ReturnType<Bus['consumerStats']>> = []
  try {
    await bus.ping()
    stats = await bus.consumerStats()
  } catch (err) {
    reachable = false
    error = String((err as Error)?.message ?? err)
  }
  const [dead, redeliveries, timers] = await Promise.all([countDeadLetters(db), redeliveryCounts(db), timerStatus(db)])
  const names = new Set([...stats.map((s) => s.name), ...dead.keys()])
  const consumers = [...names].sort().map((name) => {
    const s = stats.find((x) => x.name === name)
    return {
      name,
      pending: s?.pending ?? 0,
      inFlight: s?.inFlight ?? 0,
      lag: (s?.pending ?? 0) + relayLag,
      redeliveries: redeliveries.get(name) ?? 0,
      deadLetters: dead.get(name) ?? 0,
    }
  })
  return { bus: { kind: bus.kind, reachable, error }, relays, consumers, timers }
}

async function knownRelays(db: Kysely<any>): Promise<string[]> {
  const r = await sql<{ name: string }>`select name from bus_relay_checkpoints order by name`.execute(db)
  return r.rows.length ? r.rows.map((x) => x.name) : ['main']
}

/**
 * The `/ready` detail. Ready means the bus answers; a lagging or missing relay is reported but does
 * not take the process out of a load balancer (serving requests does not depend on it).
 */
export function busReadiness(m: BusMetrics): {
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

const relayActive = (r: RelayStatus): boolean => r.leaseUntil !== undefined && r.owner !== undefined && r.leaseUntil.getTime() > Date.now()

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')

type Sample = [labels: Record<string, string>, value: number]

function family(name: string, type: 'gauge' | 'counter', help: string, samples: Sample[]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`]
  for (const [labels, value] of samples) {
    const l = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')
    lines.push(`${name}${l ? `{${l}}` : ''} ${Number.isFinite(value) ? value : 'NaN'}`)
  }
  return lines.join('\n')
}

/** Prometheus text exposition (format 0.0.4) of the bus figures; the lead appends it to /metrics. */
export function renderPrometheus(m: BusMetrics): string {
  const c = m.consumers
  return [
    family('bus_up', 'gauge', 'Whether the bus answered (1) or not (0).', [[{ adapter: m.bus.kind }, m.bus.reachable ? 1 : 0]]),
    family('bus_relay_lag_events', 'gauge', 'Events in the log not yet published by the relay.', m.relays.map((r) => [{ relay: r.name }, r.lag])),
    family('bus_relay_active', 'gauge', 'Whether some process holds the relay lease (1) or none does (0).',
      m.relays.map((r) => [{ relay: r.name }, relayActive(r) ? 1 : 0])),
    family('bus_consumer_lag_events', 'gauge', 'Events behind the log head for a consumer: unacknowledged messages plus the relay lag.',
      c.map((x) => [{ consumer: x.name }, x.lag])),
    family('bus_consumer_pending_messages', 'gauge', 'Messages published to a consumer and not yet acknowledged (waiting, delayed or in flight).',
      c.map((x) => [{ consumer: x.name }, x.pending])),
    family('bus_consumer_in_flight_messages', 'gauge', 'Messages delivered to a consumer and not yet settled.', c.map((x) => [{ consumer: x.name }, x.inFlight])),
    family('bus_consumer_redeliveries_total', 'counter', 'Deliveries after the first (retries and ack-wait expiries), all processes.',
      c.map((x) => [{ consumer: x.name }, x.redeliveries])),
    family('bus_consumer_dead_letters', 'gauge', 'Dead letters of a consumer not replayed yet.', c.map((x) => [{ consumer: x.name }, x.deadLetters])),
    family('bus_timers_scheduled', 'gauge', 'Timers waiting to fire.', [[{}, m.timers.scheduled]]),
    family('bus_timers_overdue', 'gauge', 'Timers past their time and not yet published.', [[{}, m.timers.overdue]]),
    family('bus_timers_oldest_overdue_seconds', 'gauge', 'How late the most overdue timer is.', [[{}, m.timers.oldestOverdueMs / 1000]]),
  ].join('\n') + '\n'
}
