import t from 'tap'
import type { Bus } from '../../src/infrastructure/bus/bus.js'
import { InProcessBus } from '../../src/infrastructure/bus/in-process-bus.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'
import { type BusMetrics, collectBusMetrics } from '../../src/processes/metrics.js'
import { busReadiness } from '../../src/http/bus-figures.js'
import { exposeBus, family, parsePrometheus, value } from '../helpers/prometheus.js'
import { Relay } from '../../src/processes/relay.js'
import { Timers } from '../../src/processes/timers.js'
import { openTestDatabase } from '../helpers/test-database.js'
import { waitFor } from '../infrastructure/bus/bus-contract.js'

const db = await openTestDatabase(t)
const bus = new InProcessBus(db, { pollMs: 50 })
await bus.start()
t.teardown(() => bus.close({ graceMs: 0 }))
const store = new PostgresEventStore(db.db)
const metadata = { actor: { kind: 'system' as const, id: 'm' }, occurred_at: new Date().toISOString() }

t.test('lag: unpublished events count for the relay and for every consumer', async (t) => {
  let release!: () => void
  const gate = new Promise<void>((r) => { release = r })
  await bus.subscribe({ name: 'slow', subjects: ['events.metric.>'] }, () => gate)
  await store.append('metric-1', [1, 2, 3].map((n) => ({ type: 'Counted', data: { n }, metadata })), 'no_stream')

  const before = await collectBusMetrics(db.db, bus, { relayNames: ['metrics'] })
  t.match(before.relays, [{ name: 'metrics', lag: 3 }], 'nothing relayed yet')
  t.match(before.consumers, [{ name: 'slow', pending: 0, lag: 3 }], 'the consumer is as far behind as the relay')

  const relay = new Relay(db.db, store, bus, { name: 'metrics', pollMs: 50 })
  relay.start()
  t.teardown(() => relay.stop())
  await waitFor('relayed', async () => (await collectBusMetrics(db.db, bus)).relays[0]?.lag === 0)
  const during = await collectBusMetrics(db.db, bus)
  t.match(during.consumers, [{ name: 'slow', pending: 3, lag: 3 }], 'now pending on the bus')
  t.ok(during.consumers[0]!.inFlight > 0, 'and being handled')
  t.match(busReadiness(during), { ok: true, bus: 'in-process', relay_active: true, relay_lag: 0, consumers: { slow: { lag: 3, dead_letters: 0 } } })

  release()
  await waitFor('handled', async () => (await collectBusMetrics(db.db, bus)).consumers[0]?.lag === 0)
})

t.test('overdue timers are visible', async (t) => {
  const timers = new Timers(db.db, bus)
  await timers.schedule({ id: 'late-timer', fireAt: new Date(Date.now() - 5000), subject: 'commands.metric.x', data: {} })
  const m = await collectBusMetrics(db.db, bus)
  t.equal(m.timers.overdue, 1)
  t.ok(m.timers.oldestOverdueMs >= 5000)
  t.equal(value(parsePrometheus(await exposeBus(m)), 'bus_timers_overdue'), 1)
})

t.test('an unreachable bus makes /ready fail and shows in bus_up', async (t) => {
  const broken = Object.assign(Object.create(bus) as Bus, { ping: () => Promise.reject(new Error('connection refused')) })
  const m = await collectBusMetrics(db.db, broken)
  t.match(busReadiness(m), { ok: false, error: 'connection refused' })
  t.equal(value(parsePrometheus(await exposeBus(m)), 'bus_up', { adapter: 'in-process' }), 0)
})

t.test('Prometheus text format', async (t) => {
  const m: BusMetrics = {
    bus: { kind: 'nats', reachable: true, error: undefined },
    relays: [{ name: 'main', checkpoint: '1/1', lag: 7, owner: 'x', leaseUntil: new Date(Date.now() + 10_000), active: false, live: true }],
    consumers: [{ name: 'odd"name\\x', pending: 2, inFlight: 1, lag: 9, redeliveries: 4, deadLetters: 1 }],
    timers: { scheduled: 3, overdue: 0, oldestOverdueMs: 0 },
  }
  const text = await exposeBus(m)
  t.ok(text.endsWith('\n'), 'ends with a newline')
  const families = parsePrometheus(text)
  t.equal(family(families, 'bus_consumer_redeliveries_total')?.type, 'counter')
  t.equal(value(families, 'bus_consumer_redeliveries_total', { consumer: 'odd"name\\x' }), 4, 'label values escaped and read back')
  t.equal(value(families, 'bus_consumer_lag_events', { consumer: 'odd"name\\x' }), 9)
  t.equal(value(families, 'bus_relay_lag_events', { relay: 'main' }), 7)
  t.equal(value(families, 'bus_relay_active', { relay: 'main' }), 1)
  t.equal(value(families, 'bus_consumer_dead_letters', { consumer: 'odd"name\\x' }), 1)
  t.equal(value(families, 'bus_timers_scheduled'), 3)
  t.notOk(family(families, 'process_cpu_user_seconds_total'), 'no process metrics in the bus-only exposition')
})
