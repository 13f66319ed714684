import { spawn } from 'node:child_process'
import t from 'tap'
import { generateSecret, signHeaders } from '../../src/notifications/signing.js'
import { formatDelivery, startWebhookSink, type SinkDelivery } from '../../src/cli/webhook-sink-server.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { build } from '../helpers/build.js'
import { repoRoot, spawnCli } from '../helpers/cli-process.js'
import { createShipment, documentAndReady } from '../notifications/fixtures/shipments.js'
import { until } from '../notifications/fixtures/receiver.js'


t.teardown(() => closeIdleConnections())

/** `npm run webhook-sink`'s command as a child process; its stdout lines, and its URL once it listens. */
async function sinkProcess(t: { teardown(fn: () => unknown): void }, args: string[], env: Record<string, string> = {}) {
  const { child, stdout, stderr, exited } = spawnCli('src/cli/webhook-sink.ts', args, env, ['WEBHOOK_SECRET', 'WEBHOOK_SINK_PORT'])
  t.teardown(async () => { child.kill('SIGTERM'); await exited })
  await Promise.race([
    until(() => /listening on (\S+)/.test(stdout()), 60_000, 'the sink to listen'),
    exited.then((code) => { throw new Error(`webhook-sink exited ${code}: ${stderr()}`) }),
  ])
  return { url: /listening on (\S+)/.exec(stdout())![1]!, lines: () => stdout().split('\n'), exited, stderr }
}

const post = (url: string, body: string, headers: Record<string, string>) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } })

t.test('the sink verifies Standard Webhooks signatures with the secret it was given and prints each delivery', async (t) => {
  const secret = generateSecret()
  const sink = await sinkProcess(t, ['--port', '0', '--secret', secret])
  t.match(sink.lines()[0], /listening on http:\/\/127\.0\.0\.1:\d+\/hooks \(verifying with 1 secret\)/)

  const body = JSON.stringify({ event: 'new', notification_id: 'ntf_good', carrier_id: 'car_1', shipment_id: 7, occurred_at: new Date().toISOString() })
  const good = await post(sink.url, body, { ...signHeaders([secret], 'ntf_good', new Date(), body) })
  t.equal(good.status, 204, 'a correctly signed delivery is accepted')

  const forged = JSON.stringify({ event: 'cancelled', notification_id: 'ntf_bad', carrier_id: 'car_1', shipment_id: 8 })
  const bad = await post(sink.url, forged, { ...signHeaders([generateSecret()], 'ntf_bad', new Date(), forged) })
  t.equal(bad.status, 401, 'a delivery signed with another secret is refused, so the platform would retry it')
  t.match(await bad.json(), { message: /signature not verified/ })

  const tampered = await post(sink.url, body.replace('"shipment_id":7', '"shipment_id":9'), { ...signHeaders([secret], 'ntf_good', new Date(), body) })
  t.equal(tampered.status, 401, 'a body changed after signing is refused')

  const unsigned = await post(sink.url, body, {})
  t.equal(unsigned.status, 401, 'a delivery without signature headers is refused')

  await until(() => sink.lines().filter((l) => l.startsWith('[webhook-sink] ') && !l.includes('listening')).length === 4, 10_000, 'four lines')
  const lines = sink.lines().filter((l) => l.startsWith('[webhook-sink] ') && !l.includes('listening'))
  t.equal(lines[0], '[webhook-sink] verified new shipment_id=7 notification_id=ntf_good carrier_id=car_1 webhook-id=ntf_good → 204')
  t.match(lines[1], /^\[webhook-sink\] UNVERIFIED \(.+\) cancelled shipment_id=8 notification_id=ntf_bad carrier_id=car_1 webhook-id=ntf_bad → 401$/)
  t.match(lines[2], /^\[webhook-sink\] UNVERIFIED \(.+\) new shipment_id=9 .* → 401$/)
  t.match(lines[3], /^\[webhook-sink\] UNVERIFIED \(Missing required headers\) new .* → 401$/)
})

t.test('without a secret the sink accepts and prints deliveries, marked unverified; WEBHOOK_SINK_PORT sets the port', async (t) => {
  const sink = await sinkProcess(t, [], { WEBHOOK_SINK_PORT: '0' })
  t.match(sink.lines()[0], /no secret: nothing is verified/)
  const body = JSON.stringify({ event: 'new', notification_id: 'ntf_x', shipment_id: 1 })
  t.equal((await post(sink.url, body, {})).status, 204)
  await until(() => sink.lines().some((l) => l.includes('ntf_x')), 10_000, 'the line')
  t.ok(sink.lines().includes('[webhook-sink] UNVERIFIED (no secret given) new shipment_id=1 notification_id=ntf_x → 204'))
})

t.test('a malformed secret or port stops the sink at start with a message', async (t) => {
  const run = (args: string[]) => new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/webhook-sink.ts', ...args], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d) => { stderr += String(d) })
    child.on('exit', (code) => resolve({ code, stderr }))
  })
  const badSecret = await run(['--port', '0', '--secret', 'not base64!'])
  t.equal(badSecret.code, 1)
  t.match(badSecret.stderr, /is not a Standard Webhooks secret \(whsec_<base64>\)/)
  const badPort = await run(['--port', 'http'])
  t.equal(badPort.code, 2)
  t.match(badPort.stderr, /--port: expected 0-65535, got "http"/)
})

t.test("the platform's notifier delivers signed webhooks that the sink verifies with the carrier's secret", async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const res = await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Sink Carrier', integration: 'custom', visibility: 'private' } })
  t.equal(res.statusCode, 201, res.body)
  const carrier = res.json()
  const deliveries: SinkDelivery[] = []
  const sink = await startWebhookSink({ port: 0, secrets: [carrier.hmac_secret], onDelivery: (d) => deliveries.push(d) })
  t.teardown(() => sink.close())
  const patched = await h.call('PATCH', `/api/v1/carriers/${carrier.carrier.id}`, { token: org.token, body: { notification_url: sink.url } })
  t.equal(patched.statusCode, 200, patched.body)

  const bg = await startBackground(h.platform, silentLogger)
  t.teardown(() => bg.stop())
  const id = await createShipment(h.platform, { id: carrier.carrier.id, integration: 'custom' })
  await documentAndReady(h.platform, id)
  await until(() => deliveries.length >= 2, 15_000, 'two deliveries')
  t.same(deliveries.map((d) => [d.verified, d.event, d.shipmentId, d.carrierId, d.status]), [
    [true, 'new', id, carrier.carrier.id, 204],
    [true, 'ready_to_ship', id, carrier.carrier.id, 204],
  ])
  t.ok(deliveries.every((d) => d.notificationId?.startsWith('ntf_') && d.webhookId === d.notificationId))
  // The sink's 204 is what the platform records as the delivery.
  await until(async () => {
    const log = (await h.call('GET', `/carrier/v1/notifications?shipment_id=${id}`, { token: carrier.api_key })).json()
    return log.data.length === 2 && log.data.every((n: any) => n.status === 'delivered' && n.attempts[0].status_code === 204)
  }, 10_000, 'both deliveries logged as delivered')
})

t.test('organization webhooks ({id, type, data}) print their type and subject', async (t) => {
  const secret = generateSecret()
  const seen: SinkDelivery[] = []
  const sink = await startWebhookSink({ port: 0, secrets: [secret], onDelivery: (d) => seen.push(d) })
  t.teardown(() => sink.close())
  const body = JSON.stringify({ id: 'whd_1', type: 'task.completed', occurred_at: new Date().toISOString(), data: { ulid: '01JTASK', organization_id: 'org_1' } })
  const res = await post(sink.url, body, { ...signHeaders([secret], 'whd_1', new Date(), body) })
  t.equal(res.status, 204)
  t.match(seen[0], { verified: true, event: 'task.completed', subjectId: '01JTASK', webhookId: 'whd_1' })
  t.equal(formatDelivery(seen[0]!), 'verified task.completed subject=01JTASK webhook-id=whd_1 → 204')
})
