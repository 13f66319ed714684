import type { Database } from '../infrastructure/database/database.js'
import type { Kysely } from 'kysely'
import { sql } from 'kysely'
import type { Bus } from '../infrastructure/bus/bus.js'
import { countDeadLetters, redeliveryCounts } from '../infrastructure/bus/dead-letters.js'
import { relayStatus, type RelayStatus } from './relay.js'
import { timerStatus, type TimerStatus } from './timers.js'
import { messageOf } from '../shared/thrown.js'

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
export async function collectBusMetrics(db: Kysely<Database>, bus: Bus, opts: { relayNames?: string[] } = {}): Promise<BusMetrics> {
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
    error = messageOf(err)
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

async function knownRelays(db: Kysely<Database>): Promise<string[]> {
  const r = await sql<{ name: string }>`select name from bus_relay_checkpoints order by name`.execute(db)
  return r.rows.length ? r.rows.map((x) => x.name) : ['main']
}
