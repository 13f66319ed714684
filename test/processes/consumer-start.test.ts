import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import t from 'tap'
import { planReplay, ReplayRefused, runReplay } from '../../src/cli/replay.js'
import { InProcessBus } from '../../src/infrastructure/bus/in-process-bus.js'
import { down, up } from '../../src/infrastructure/database/migrations/2026-11-24T00-02-consumer-start-positions.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { createPlatform } from '../../src/platform.js'
import { startBackground, type Background } from '../../src/processes/background.js'
import { readStartPosition, startPositionOf } from '../../src/processes/consumer-start.js'
import { NOTIFIER_CONSUMER } from '../../src/processes/notifier.js'
import { EXPIRY_SCHEDULER_CONSUMER, expiryTimerId } from '../../src/processes/shipment-expiry.js'
import { build } from '../helpers/build.js'
import { secondConnection } from '../helpers/test-database.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'
import { createShipment } from '../notifications/fixtures/shipments.js'
import { history } from './fixtures/shipment-history.js'

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

/** Until the relay has published the whole log and both event consumers have settled everything. */
async function drained(bg: Background): Promise<void> {
  await until(async () => (await bg.relay.status()).lag === 0, 20_000, 'the relay at the head')
  await until(async () => {
    const stats = await bg.bus.consumerStats()
    return [NOTIFIER_CONSUMER, EXPIRY_SCHEDULER_CONSUMER].every((name) => stats.find((c) => c.name === name)?.pending === 0)
  }, 20_000, 'the event consumers drained')
}

for (const adapter of ADAPTERS) {
  t.test(`on the ${adapter} bus: a first start at the head of a log of 1,000 shipments, a restart that skips nothing, a replay`, async (t) => {
    const h = await build(t, { webhookRetryDelaysMs: [50], webhookTimeoutMs: 10_000, natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
    const rx = await startReceiver(t)
    const carrier = (await h.call('POST', '/api/v1/carriers', {
      token: org.token, body: { name: 'C', integration: 'custom', visibility: 'private', notification_url: rx.url },
    })).json().carrier
    const notified = async (ids: number[]) => Number((await sql<{ n: number }>`
      select count(*)::int as n from carrier_notifications where shipment_id = any(${ids}::bigint[])`.execute(h.platform.db)).rows[0]!.n)
    // Notifications (webhook ids) sent for these shipments: a webhook answered late and tried again is still one.
    const webhooksFor = (ids: number[]) => new Set(rx.received.filter((r) => ids.includes(JSON.parse(r.body).shipment_id)).map((r) => r.headers['webhook-id'])).size

    let at = Date.now()
    const lap = (what: string) => { t.comment(`${what}: ${Date.now() - at} ms`); at = Date.now() }
    const past = await history(h.platform, carrier.id, 1000)
    lap('1,000 shipments appended')
    const pastIds = past.map((s) => s.id)
    const suffix = randomBytes(4).toString('hex')
    const names = { streamName: `CS_${suffix}`, subjectPrefix: `cs${suffix}` }
    // The relay is new too: it publishes the whole history to the bus.
    let bg = await startBackground(h.platform, silentLogger, { nats: names })
    t.teardown(() => bg.stop())
    await drained(bg)
    lap('relayed and drained')
    t.equal(await notified(pastIds), 0, 'no notification for a shipment of the history')
    t.equal(rx.received.length, 0, 'no webhook sent')
    t.equal(await bg.timers.get(expiryTimerId(pastIds[0]!)), undefined, 'no expiry timer for an old shipment')
    t.equal((await readStartPosition(h.platform.db, NOTIFIER_CONSUMER))?.position, past.at(-1)!.position, 'the notifier began at the head')

    const fresh = await createShipment(h.platform, { id: carrier.id, integration: 'custom' })
    await until(() => webhooksFor([fresh]) === 1, 10_000, 'the webhook of a shipment created after the start')
    await until(async () => (await bg.timers.get(expiryTimerId(fresh)))?.state === 'scheduled', 10_000, 'its expiry timer')

    const outer = t
    t.test('a restart keeps the start position: events that arrived while down are delivered', async (t) => {
      await bg.stop()
      const whileDown = await history(h.platform, carrier.id, 3)
      const restarted = await createPlatform(h.platform.config, { database: h.platform.database })
      // It keeps running for the replay test: closed with the outer test.
      outer.teardown(() => restarted.close())
      bg = await startBackground(restarted, silentLogger, { nats: names })
      const ids = whileDown.map((s) => s.id)
      await until(() => webhooksFor(ids) === 3, 10_000, 'the webhooks of the shipments created while down')
      t.equal((await readStartPosition(h.platform.db, NOTIFIER_CONSUMER))?.position, past.at(-1)!.position, 'unchanged by the restart')
    })

    t.test('a replay after a position delivers the skipped events after it, once', async (t) => {
      const request = { db: h.platform.db, store: h.platform.store, bus: bg.bus, consumer: NOTIFIER_CONSUMER, after: past[989]!.position, batchSize: 7 }
      const plan = await planReplay(request)
      t.equal(plan.count, 10, 'the ten historic shipments after the position')
      const progress: number[] = []
      const r = await runReplay(request, plan, (n) => progress.push(n))
      t.equal(r.delivered, 10)
      t.equal(progress.at(-1), 10, 'progress reported up to the count')
      t.ok(r.startMoved)
      const replayed = pastIds.slice(990)
      await until(() => webhooksFor(replayed) === 10, 10_000, 'the replayed webhooks')
      t.equal(await notified(pastIds.slice(0, 990)), 0, 'none before the position')
      t.equal((await readStartPosition(h.platform.db, NOTIFIER_CONSUMER))?.position, past[989]!.position, 'the start moved back to it')
      t.equal((await planReplay(request)).count, 0, 'asking again: nothing left to deliver')
      // The same copies published once more (an interrupted replay run again) make no second webhook.
      await runReplay(request, { ...plan, through: past.at(-1)!.position })
      await new Promise((r) => setTimeout(r, 500))
      t.equal(webhooksFor(replayed), 10, 'no notification made twice')
      t.equal(await notified(replayed), 10)
    })
  })
}

t.test('empty log: from the beginning; two processes starting a consumer at once agree on one start position, and a later start keeps it; no replay before a first start', async (t) => {
  const h = await build(t)
  t.equal(await startPositionOf(h.platform.db, h.platform.store, 'empty-log-consumer'), null, 'on an empty log a consumer starts from the beginning')
  await h.createOrganization({ roles: ['shipper'] })
  const other = await secondConnection(t, h.platform.database as Parameters<typeof secondConnection>[1])
  const [a, b] = await Promise.all([
    startPositionOf(h.platform.db, h.platform.store, 'race-consumer'),
    startPositionOf(other.db, h.platform.store, 'race-consumer'),
  ])
  t.type(a, 'string')
  t.equal(a, b)
  await h.createOrganization({ roles: ['shipper'] })
  t.equal(await startPositionOf(h.platform.db, h.platform.store, 'race-consumer'), a, 'a restart does not move it to the new head')
  t.not(await h.platform.store.headPosition(), a)

  const bus = new InProcessBus(h.platform.database)
  await bus.start()
  t.teardown(() => bus.close({ graceMs: 0 }))
  const request = { db: h.platform.db, store: h.platform.store, bus, consumer: NOTIFIER_CONSUMER, after: 'start' }
  await t.rejects(planReplay(request), new ReplayRefused('consumer "carrier-notifier" has not started yet: at its first start it begins at the head of the log; replay after that'))
  await t.rejects(planReplay({ ...request, after: 'yesterday' }), new ReplayRefused('"yesterday" is not a position of this event log (or "start")'))

  t.test('migration 00-02: where the relay has run, the event consumers of that release keep everything the bus holds for them', async (t) => {
    const db = h.platform.db
    const rows = async () => (await sql<{ consumer: string; position: string | null }>`
      select consumer, position from bus_consumer_start_positions order by consumer`.execute(db)).rows
    await down(db)
    await up(db)
    t.same(await rows(), [], 'no relay has run: every consumer starts at the head when it first runs')
    await down(db)
    await sql`insert into bus_relay_checkpoints (name, checkpoint) values ('migration-test', '0/0')`.execute(db)
    await up(db)
    t.same(await rows(), [
      { consumer: NOTIFIER_CONSUMER, position: null }, { consumer: EXPIRY_SCHEDULER_CONSUMER, position: null },
    ], 'from the beginning, not from the head at the upgrade')
    t.equal(await startPositionOf(db, h.platform.store, NOTIFIER_CONSUMER), null, 'and the first start after the upgrade keeps that')
  })
})
