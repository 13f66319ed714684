import { randomBytes } from 'node:crypto'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { createPlatform, type Platform } from '../../src/platform.js'
import { startBackground, type Background } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { eventMessage } from '../../src/processes/relay.js'
import { expiryTimerId } from '../../src/processes/shipment-expiry.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { startReceiver, until } from './fixtures/receiver.js'
import { cancel, createShipment, documentAndReady } from './fixtures/shipments.js'

const DELAYS = [40, 40, 40, 40, 40, 40] // six retries: seven attempts in all

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

/**
 * The real background of an API process (bus, relay, timers, notifier, expiry) on `platform`.
 * Processes of one test share `names`: on NATS, the same stream and subject prefix, as one deployment would.
 */
/** What the background logged as warnings: a failed webhook attempt must show where `npm start` prints. */
const warnings: { obj: Record<string, unknown>; msg: string }[] = []
const warningLogger = { ...silentLogger, warn: (obj: object, msg: string) => { warnings.push({ obj: obj as Record<string, unknown>, msg }) } }

function backgroundOf(names: { streamName: string; subjectPrefix: string }) {
  return (platform: Platform): Promise<Background> => startBackground(platform, warningLogger, { nats: names })
}

const namesFor = (tag: string) => {
  const suffix = randomBytes(4).toString('hex')
  return { streamName: `${tag.toUpperCase()}_${suffix}`, subjectPrefix: `${tag}${suffix}` }
}

for (const adapter of ADAPTERS) {
const natsOverride = { natsUrl: adapter === 'nats' ? natsUrl : undefined }

t.test(`carrier notifications on the ${adapter} bus`, async (t) => {
  // A generous time-out: a loaded CI machine must not turn a slow 503 into a timed-out attempt.
  const h = await build(t, { webhookRetryDelaysMs: DELAYS, webhookTimeoutMs: 3000, ...natsOverride })
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const rx = await startReceiver(t)
  const mk = async (body: Record<string, unknown>) => (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { visibility: 'private', ...body } })).json()
  const custom = await mk({ name: 'Custom', integration: 'custom', notification_url: rx.url })
  const routes = await mk({ name: 'Routes', integration: 'service_routes', notification_url: rx.url })
  const other = await mk({ name: 'Other', integration: 'custom', notification_url: rx.url })
  const verifier = new Webhook(custom.hmac_secret)

  const start = backgroundOf(namesFor('ntf'))
  const outer = t
  let bg = await start(h.platform)
  t.equal(bg.bus.kind, adapter)
  t.teardown(() => bg.stop())

  const notificationsOf = async (shipmentId: number) =>
    (await sql<{ id: string; status: string; event: string }>`select id, status, event from carrier_notifications where shipment_id = ${shipmentId} order by seq`.execute(h.platform.db)).rows

  t.test('new: signed per Standard Webhooks, lightweight body', async (t) => {
    const id = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await until(() => rx.received.some((r) => JSON.parse(r.body).shipment_id === id), 5000, 'the new webhook')
    const r = rx.received.find((x) => JSON.parse(x.body).shipment_id === id)!
    const body = verifier.verify(r.body, r.headers) as any
    t.equal(body.event, 'new')
    t.equal(body.carrier_id, custom.carrier.id)
    t.match(body.notification_id, /^ntf_/)
    t.equal(r.headers['webhook-id'], body.notification_id, 'webhook-id is the notification_id')
    t.same(Object.keys(body).sort(), ['carrier_id', 'event', 'notification_id', 'occurred_at', 'shipment_id'])
    t.throws(() => new Webhook(other.hmac_secret).verify(r.body, r.headers), 'another secret does not verify')
    t.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60)
  })

  t.test('a service_routes carrier gets no webhook', async (t) => {
    const id = await createShipment(h.platform, { id: routes.carrier.id, integration: 'service_routes' })
    await documentAndReady(h.platform, id).catch(() => undefined)
    await new Promise((r) => setTimeout(r, 300))
    t.same(await notificationsOf(id), [])
    t.notOk(rx.received.some((x) => JSON.parse(x.body).shipment_id === id))
  })

  t.test('ready_to_ship and cancelled', async (t) => {
    const a = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await documentAndReady(h.platform, a)
    const b = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await cancel(h.platform, b)
    await until(async () => (await notificationsOf(a)).concat(await notificationsOf(b)).every((n) => n.status === 'delivered') && (await notificationsOf(a)).length === 2 && (await notificationsOf(b)).length === 2, 5000, 'deliveries')
    t.same((await notificationsOf(a)).map((n) => n.event), ['new', 'ready_to_ship'])
    t.same((await notificationsOf(b)).map((n) => n.event), ['new', 'cancelled'])
  })

  t.test('receiver down for the first half of the schedule: delivered after, same ids every time', async (t) => {
    const failing = new Set<string>()
    const countsById = new Map<string, number>()
    rx.answer((_n, r) => {
      const id = r.headers['webhook-id']!
      const n = (countsById.get(id) ?? 0) + 1
      countsById.set(id, n)
      if (n <= 3) { failing.add(id); return 503 }
      return 200
    })
    t.teardown(() => rx.answer(() => 200))
    const ids = [] as number[]
    for (let i = 0; i < 5; i++) ids.push(await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' }))
    await until(async () => {
      const rows = (await Promise.all(ids.map(notificationsOf))).flat()
      return rows.length === 5 && rows.every((n) => n.status === 'delivered')
    }, 10_000, 'delivery after the outage')
    const rows = (await Promise.all(ids.map(notificationsOf))).flat()
    for (const n of rows) {
      t.equal(countsById.get(n.id), 4, `${n.id}: three refusals then one success`)
      const bodies = rx.received.filter((r) => r.headers['webhook-id'] === n.id).map((r) => (verifier.verify(r.body, r.headers) as any).notification_id)
      t.same(new Set(bodies), new Set([n.id]), 'the same notification_id on every retry')
    }
    const log = await h.call('GET', `/carrier/v1/notifications?shipment_id=${ids[0]}`, { token: custom.api_key })
    t.equal(log.statusCode, 200, log.body)
    const entry = log.json().data[0]
    t.equal(entry.status, 'delivered')
    t.same(entry.attempts.map((a: any) => a.status_code), [503, 503, 503, 200], 'every attempt is in the log, with its response code')
    t.same(entry.attempts.map((a: any) => a.attempt), [1, 2, 3, 4])
    t.ok(entry.attempts.every((a: any) => typeof a.latency_ms === 'number'))
  })

  t.test('server restart in the middle of retries: nothing lost, same ids', async (t) => {
    // A first retry far enough away that no schedule runs out before the stop, however slow the machine;
    // the restarted process must pick the pending retries up from the database.
    const delays = h.platform.config.webhookRetryDelaysMs
    h.platform.config.webhookRetryDelaysMs = [1500, ...DELAYS.slice(1)]
    t.teardown(() => { h.platform.config.webhookRetryDelaysMs = delays })
    rx.answer(() => 503)
    const ids = [] as number[]
    for (let i = 0; i < 3; i++) ids.push(await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' }))
    await until(async () => (await Promise.all(ids.map(notificationsOf))).flat().length === 3, 5000, 'enqueued')
    const attemptedIds = () => new Set(rx.received.map((r) => JSON.parse(r.body).shipment_id).filter((id) => ids.includes(id)))
    await until(() => attemptedIds().size === 3, 5000, 'first attempts')
    await bg.stop()
    const pending = (await Promise.all(ids.map(notificationsOf))).flat()
    t.ok(pending.every((n) => n.status === 'pending'), 'stopped with every retry still pending')
    // Events while no process runs: the relay publishes them after the restart, the notifier's durable consumer gets them.
    const whileDown = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    ids.push(whileDown)
    const before = (await Promise.all(ids.map(notificationsOf))).flat().map((n) => n.id)
    rx.answer(() => 200)
    // A new process: a fresh platform on the same database, nothing carried over in memory.
    const restarted = await createPlatform(h.platform.config, { database: h.platform.database })
    // It keeps running for the tests after this one: closed with the outer test.
    outer.teardown(() => restarted.close())
    bg = await start(restarted)
    await until(async () => {
      const rows = (await Promise.all(ids.map(notificationsOf))).flat()
      return rows.length === 4 && rows.every((n) => n.status === 'delivered')
    }, 10_000, 'delivery after the restart')
    const after = (await Promise.all(ids.map(notificationsOf))).flat().map((n) => n.id)
    t.same(after.slice(0, before.length), before, 'the same notification ids')
    const delivered = new Set(rx.received.filter((r) => ids.includes(JSON.parse(r.body).shipment_id)).map((r) => r.headers['webhook-id']))
    t.equal(delivered.size, 4)
  })

  t.test('schedule used up → failed; redeliver by hand with the same id; another carrier gets 404', async (t) => {
    rx.answer(() => 500)
    const id = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await until(async () => (await notificationsOf(id))[0]?.status === 'failed', 10_000, 'failed')
    const [n] = await notificationsOf(id)
    const log = (await h.call('GET', `/carrier/v1/notifications?status=failed&shipment_id=${id}`, { token: custom.api_key })).json()
    t.equal(log.data[0].attempts.length, DELAYS.length + 1, 'one attempt plus one per retry delay')
    const logged = warnings.filter((w) => w.obj.webhook_id === n!.id)
    t.equal(logged.length, DELAYS.length + 1, 'every failed attempt is logged')
    t.match(logged[0], { msg: 'webhook attempt failed; retrying later', obj: { target: 'carrier', attempt: 1, status_code: 500, retry_in_ms: DELAYS[0], to: new URL(rx.url).host } })
    t.match(logged.at(-1), { msg: /no retries left/, obj: { attempt: DELAYS.length + 1, gave_up: true } })
    t.equal(log.data[0].next_attempt_at, null)
    t.equal((await h.call('POST', `/carrier/v1/notifications/${n!.id}/redeliver`, { token: other.api_key })).statusCode, 404)
    rx.answer(() => 204)
    const re = await h.call('POST', `/carrier/v1/notifications/${n!.id}/redeliver`, { token: custom.api_key })
    t.equal(re.statusCode, 202, re.body)
    await until(async () => (await notificationsOf(id))[0]?.status === 'delivered', 5000, 'redelivered')
    const last = rx.received.filter((r) => r.headers['webhook-id'] === n!.id).at(-1)!
    t.equal((verifier.verify(last.body, last.headers) as any).notification_id, n!.id)
  })

  t.test('delivery log: own notifications only, newest first, cursor pages', async (t) => {
    const p1 = (await h.call('GET', '/carrier/v1/notifications?limit=2', { token: custom.api_key })).json()
    t.equal(p1.data.length, 2)
    t.type(p1.meta.next_cursor, 'string')
    const p2 = (await h.call('GET', `/carrier/v1/notifications?limit=2&cursor=${p1.meta.next_cursor}`, { token: custom.api_key })).json()
    t.equal(p2.data.length, 2)
    t.notOk(p2.data.some((x: any) => p1.data.some((y: any) => y.notification_id === x.notification_id)))
    t.same((await h.call('GET', '/carrier/v1/notifications', { token: other.api_key })).json().data, [])
    t.equal((await h.call('GET', '/carrier/v1/notifications?cursor=abc', { token: custom.api_key })).statusCode, 422)
  })

  t.test('send-time URL check: a URL that now points at a refused address is not called', async (t) => {
    // As if DNS had been rebound after the URL was saved: the send-time check refuses loopback.
    h.platform.config.allowPrivateUrls = false
    t.teardown(() => { h.platform.config.allowPrivateUrls = true })
    const before = rx.received.length
    const id = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await until(async () => {
      const log = (await h.call('GET', `/carrier/v1/notifications?shipment_id=${id}`, { token: custom.api_key })).json()
      return log.data[0]?.attempts.length > 0
    }, 5000, 'an attempt')
    const log = (await h.call('GET', `/carrier/v1/notifications?shipment_id=${id}`, { token: custom.api_key })).json()
    t.match(log.data[0].attempts[0].error, /refused/)
    t.equal(log.data[0].attempts[0].status_code, null)
    t.equal(rx.received.length, before, 'the receiver was never called')
    h.platform.config.allowPrivateUrls = true
    await until(async () => (await notificationsOf(id))[0]?.status === 'delivered', 5000, 'delivered once allowed again')
  })

  t.test('two processes side by side: every notification created once and delivered once', async (t) => {
    rx.answer(() => 200)
    const second = await createPlatform(h.platform.config, { database: h.platform.database })
    const other = await start(second)
    t.teardown(async () => { await other.stop(); await second.close() })
    const ids = [] as number[]
    for (let i = 0; i < 10; i++) ids.push(await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' }))
    await until(async () => {
      const rows = (await Promise.all(ids.map(notificationsOf))).flat()
      return rows.length === 10 && rows.every((n) => n.status === 'delivered')
    }, 10_000, 'deliveries by two dispatchers')
    const rows = (await Promise.all(ids.map(notificationsOf))).flat()
    t.equal(rows.length, 10, 'one notification per event')
    for (const n of rows) t.equal(rx.received.filter((r) => r.headers['webhook-id'] === n.id).length, 1, `${n.id} delivered once`)
  })

  t.test('a relayed event delivered again (even under another message id) makes no second notification', async (t) => {
    rx.answer(() => 200)
    const id = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await until(async () => (await notificationsOf(id))[0]?.status === 'delivered', 5000, 'delivered')
    const [created] = await h.platform.store.readStream(`shipment-${id}`)
    const message = eventMessage(created!)
    await bg.bus.publish([message, { ...message, id: `${message.id}-replayed` }])
    await new Promise((r) => setTimeout(r, 500))
    t.equal((await notificationsOf(id)).length, 1, 'still one notification')
    t.equal(rx.received.filter((r) => JSON.parse(r.body).shipment_id === id).length, 1, 'sent once')
  })

  t.test('a later event that overtakes its ShipmentCreated waits for it (not dropped)', async (t) => {
    rx.answer(() => 200)
    const a = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await cancel(h.platform, a)
    await until(async () => (await notificationsOf(a)).length === 2, 5000, 'notifications of the model shipment')
    // The same events for another shipment, published in the wrong order.
    const b = a + 7
    const [created, cancelled] = (await h.platform.store.readStream(`shipment-${a}`)).map((e) => eventMessage({ ...e, id: `${e.id}-b`, streamId: `shipment-${b}` }))
    await bg.bus.publish(cancelled!)
    await new Promise((r) => setTimeout(r, 300))
    t.same(await notificationsOf(b), [], 'nothing while its ShipmentCreated is missing')
    await bg.bus.publish(created!)
    await until(async () => (await notificationsOf(b)).length === 2, 10_000, 'both notifications once the ShipmentCreated is in')
    t.same((await notificationsOf(b)).map((n) => n.event), ['new', 'cancelled'])
  })

  t.test('rotation: both secrets sign during the overlap', async (t) => {
    const rotated = (await h.call('POST', `/api/v1/carriers/${custom.carrier.id}/keys`, { token: org.token })).json()
    const id = await createShipment(h.platform, { id: custom.carrier.id, integration: 'custom' })
    await until(() => rx.received.some((r) => JSON.parse(r.body).shipment_id === id), 5000, 'webhook')
    const r = rx.received.find((x) => JSON.parse(x.body).shipment_id === id)!
    t.equal(r.headers['webhook-signature']!.split(' ').length, 2)
    t.ok(new Webhook(rotated.hmac_secret).verify(r.body, r.headers))
    t.ok(verifier.verify(r.body, r.headers))
  })
})

t.test(`expiry on the ${adapter} bus timers: a shipment not ready within SHIPMENT_EXPIRY_HOURS expires and the carrier hears it`, async (t) => {
  // 3.6 s: long enough that the ready shipment's cancel reaches the scheduler first on a loaded machine
  // (at 0.72 s a CI run with both cores busy saw its timer fire first).
  const h = await build(t, { shipmentExpiryHours: 0.001, webhookRetryDelaysMs: [50], ...natsOverride })
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const rx = await startReceiver(t)
  const c = (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'E', integration: 'custom', visibility: 'private', notification_url: rx.url } })).json()
  const bg = await backgroundOf(namesFor('exp'))(h.platform)
  t.teardown(() => bg.stop())
  const stale = await createShipment(h.platform, { id: c.carrier.id, integration: 'custom' })
  const ready = await createShipment(h.platform, { id: c.carrier.id, integration: 'custom' })
  await documentAndReady(h.platform, ready)
  await until(() => rx.received.some((r) => JSON.parse(r.body).event === 'expired'), 15_000, 'expired webhook')
  await new Promise((r) => setTimeout(r, 300))
  const events = rx.received.map((r) => JSON.parse(r.body)).map((b) => [b.shipment_id, b.event])
  t.same(events.filter(([s]) => s === stale).map(([, e]) => e), ['new', 'expired'])
  t.same(events.filter(([s]) => s === ready).map(([, e]) => e), ['new', 'ready_to_ship'], 'a ready shipment does not expire')
  const stream = await h.platform.store.readStream(`shipment-${stale}`)
  t.equal(stream.at(-1)!.type, 'ShipmentExpired')
  t.equal((await bg.timers.get(expiryTimerId(stale)))?.state, 'fired', 'the bus timer fired')
  t.equal((await bg.timers.get(expiryTimerId(ready)))?.state, 'cancelled', 'a ready shipment\'s timer is cancelled')
  t.equal((await bg.timers.get(expiryTimerId(stale)))?.subject, 'commands.shipment.expire')
})
}
