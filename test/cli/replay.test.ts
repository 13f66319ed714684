import t from 'tap'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { startBackground } from '../../src/processes/background.js'
import { EVENT_CONSUMERS } from '../../src/processes/event-consumers.js'
import { NOTIFIER_CONSUMER } from '../../src/processes/notifier.js'
import { build } from '../helpers/build.js'
import { runCli } from '../helpers/cli-process.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'
import { history } from '../processes/fixtures/shipment-history.js'


t.teardown(() => closeIdleConnections())

/** The CLI as an operator runs it; the in-process bus (no NATS_URL) unless `env` says otherwise. */
function cli(args: string[], env: Record<string, string>) {
  return runCli(args, env, ['DATABASE_URL', 'EVENTSTORE_URL', 'NATS_URL'])
}

t.test('`replay` refuses an unknown consumer or a missing --after with the usage, before touching a database', async (t) => {
  const unknown = await cli(['replay', 'nobody', '--after', 'start'], {})
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /unknown consumer "nobody"; event consumers: carrier-notifier, organization-webhooks, shipment-expiry-scheduler/)
  const bare = await cli(['replay', NOTIFIER_CONSUMER], {})
  t.equal(bare.code, 2)
  t.match(bare.stderr, /replay <consumer> --after <position\|start>/)
  t.match(bare.stderr, `consumers: ${Object.keys(EVENT_CONSUMERS).join(', ')}\n`, 'the usage names every event consumer')
})

t.test('`replay` against DATABASE_URL: prints the count, and the running server\'s notifier delivers exactly those', async (t) => {
  const h = await build(t, { webhookRetryDelaysMs: [50], webhookTimeoutMs: 10_000 })
  const url = (h.platform.database as { url?: string }).url!
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const rx = await startReceiver(t)
  const carrier = (await h.call('POST', '/api/v1/carriers', {
    token: org.token, body: { name: 'C', integration: 'custom', visibility: 'private', notification_url: rx.url },
  })).json().carrier
  const past = await history(h.platform, carrier.id, 25)
  // A webhook answered late and tried again is the dispatcher's at-least-once, not a second notification.
  const shipmentsNotified = () => new Set(rx.received.map((x) => JSON.parse(x.body).shipment_id))
  const notifications = () => new Set(rx.received.map((x) => x.headers['webhook-id']))
  const bg = await startBackground(h.platform, silentLogger)
  t.teardown(() => bg.stop())
  await until(async () => (await bg.relay.status()).lag === 0, 20_000, 'the relay at the head')
  await until(async () => (await bg.bus.consumerStats()).find((c) => c.name === NOTIFIER_CONSUMER)?.pending === 0, 20_000, 'the notifier drained')
  t.equal(rx.received.length, 0, 'the history was not notified at the first start')

  const r = await cli(['replay', NOTIFIER_CONSUMER, '--after', past[4]!.position], { DATABASE_URL: url })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, new RegExp(`^replaying 20 events to carrier-notifier \\(after ${past[4]!.position}, through its start position ${past.at(-1)!.position}\\)\n`), 'the count comes first')
  t.match(r.stdout, new RegExp(`replayed 20 events to carrier-notifier; its start position is now ${past[4]!.position}`))
  const ids = (from: number) => new Set(past.slice(from).map((s) => s.id))
  await until(() => shipmentsNotified().size === 20, 20_000, 'the replayed webhooks')
  t.same(shipmentsNotified(), ids(5), 'the shipments after the position')
  t.equal(notifications().size, 20, 'one notification each')

  const again = await cli(['replay', NOTIFIER_CONSUMER, '--after', past[4]!.position], { DATABASE_URL: url })
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, /nothing to replay: carrier-notifier has had every event after/)
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(notifications().size, 20, 'no notification made twice')
})
