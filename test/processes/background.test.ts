import { randomBytes } from 'node:crypto'
import t from 'tap'
import { family, parsePrometheus, value } from '../helpers/prometheus.js'
import { build } from '../helpers/build.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { openDatabase } from '../../src/infrastructure/database/connection.js'
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store.js'

const natsUrl = process.env.NATS_URL

for (const adapter of natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const) {
  t.test(`background on the ${adapter} bus: relay publishes, /ready and /metrics report it`, async (t) => {
    const h = await build(t, { natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const suffix = randomBytes(4).toString('hex')
    const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `BG_${suffix}`, subjectPrefix: `bg${suffix}` } })
    t.equal(bg.bus.kind, adapter)
    await h.createOrganization({ roles: ['shipper'] })
    const deadline = Date.now() + 10_000
    let lag = Infinity
    while (Date.now() < deadline) {
      const m = await bg.metrics()
      lag = m.relays.reduce((s, r) => s + Math.max(0, r.lag), 0)
      if (lag === 0 && m.relays.length) break
      await new Promise((r) => setTimeout(r, 50))
    }
    t.equal(lag, 0, 'the relay published every event')

    const ready = await h.call('GET', '/ready')
    t.equal(ready.statusCode, 200, ready.body)
    t.equal(ready.json().checks.bus.status, 'ok')
    t.equal(ready.json().checks.bus.bus, adapter)

    const metrics = await h.call('GET', '/metrics')
    t.equal(metrics.statusCode, 200)
    t.match(metrics.headers['content-type'], /text\/plain/)
    const families = parsePrometheus(metrics.body)
    t.equal(value(families, 'bus_up', { adapter }), 1)
    t.equal(value(families, 'bus_relay_lag_events', { relay: 'main' }), 0)
    t.equal(value(families, 'projection_lag_events', { projection: 'organizations' }), 0)
    t.equal(family(families, 'bus_consumer_dead_letters')?.type, 'gauge')

    await bg.stop()
    t.equal(h.platform.background, undefined, 'stopping detaches it')
    const after = await h.call('GET', '/metrics')
    t.equal(family(parsePrometheus(after.body), 'bus_up')?.samples.length, 0, 'no bus figures once it stopped')
  })
}

// A second process: its own connections to the same database.
t.test('while its relay holds the lease and its projector runs, a process does not wake the others', async (t) => {
  const h = await build(t)
  const other = await openDatabase({ url: (h.platform.database as { url?: string }).url ?? '', poolSize: 2 })
  t.teardown(() => other.close())
  const listener = new PostgresEventStore(other.db)
  await listener.listenWith(other.listen)
  t.teardown(() => listener.close())
  let heard = 0
  listener.onAppended(() => { heard++ })

  const bg = await startBackground(h.platform, silentLogger)
  for (let i = 0; i < 200 && !bg.relay.isActive; i++) await new Promise((r) => setTimeout(r, 10))
  t.ok(bg.relay.isActive, 'the relay took the lease')
  heard = 0
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await new Promise((r) => setTimeout(r, 200))
  t.equal(heard, 0, 'no NOTIFY for this process\'s own appends')
  const res = await h.call('GET', '/api/v1/organizations/my', { token: shipper.token })
  t.equal(res.statusCode, 200, 'its own projector kept up without one')

  await bg.stop()
  await h.createOrganization({ roles: ['shipper'] })
  for (let i = 0; i < 100 && heard === 0; i++) await new Promise((r) => setTimeout(r, 10))
  t.ok(heard > 0, 'without the relay here, the others are woken again')
})
