import { randomBytes } from 'node:crypto'
import t from 'tap'
import { parsePrometheus, value } from '../helpers/prometheus.js'
import { Webhook as Verifier } from 'standardwebhooks'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import type { Platform } from '../../src/platform.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { eventMessage } from '../../src/processes/relay.js'
import { newUlid } from '../../src/shared/ids.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'
import { createShipment } from '../notifications/fixtures/shipments.js'

const DELAYS = [40, 40, 40] // three retries: four attempts in all

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

t.teardown(() => closeIdleConnections())

/** A task event as the tasks module will append it: stream task-<ulid>, ulid and organization_id in the data. */
async function appendTask(p: Platform, type: string, ulid: string, organizationId: string, extra: Record<string, unknown> = {}) {
  const occurred_at = p.clock().toISOString()
  await p.store.append(`task-${ulid}`, [{ type, data: { ulid, organization_id: organizationId, ...extra }, metadata: { actor: { kind: 'organization', id: organizationId }, occurred_at } }], 'any')
  const events = await p.store.readStream(`task-${ulid}`)
  return events.at(-1)!
}

for (const adapter of ADAPTERS) {
t.test(`organization webhooks delivered on the ${adapter} bus`, async (t) => {
  const h = await build(t, { webhookRetryDelaysMs: DELAYS, webhookTimeoutMs: 3000, natsUrl: adapter === 'nats' ? natsUrl : undefined })
  const org = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const suffix = randomBytes(4).toString('hex')
  const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `WHK_${suffix}`, subjectPrefix: `whk${suffix}` } })
  t.equal(bg.bus.kind, adapter)
  t.teardown(() => bg.stop())

  const subscribe = async (token: string, url: string, events: string[]) => {
    const r = await h.call('POST', '/api/v1/webhooks', { token, body: { url, events } })
    if (r.statusCode !== 201) throw new Error(r.body)
    return r.json() as { webhook: { id: string }; secret: string }
  }
  const rxCompleted = await startReceiver(t)
  const rxAll = await startReceiver(t)
  const rxOther = await startReceiver(t)
  const completed = await subscribe(org.token, rxCompleted.url, ['task.completed'])
  const all = await subscribe(org.token, rxAll.url, ['task.*'])
  const foreign = await subscribe(other.token, rxOther.url, ['task.*'])
  const deliveriesOf = async (webhookId: string, token = org.token) => {
    const r = await h.call('GET', `/api/v1/webhooks/${webhookId}/deliveries?perPage=100`, { token })
    if (r.statusCode !== 200) throw new Error(r.body)
    return r.json() as { data: any[]; meta: { total: number } }
  }
  const bodies = (rx: { received: Array<{ body: string }> }) => rx.received.map((r) => JSON.parse(r.body))

  t.test('TaskCompleted → a signed task.completed {id, type, occurred_at, data}; patterns decide who hears what', async (t) => {
    const ulid = newUlid()
    await appendTask(h.platform, 'TaskCreated', ulid, org.id, { type: 'delivery' })
    const completedAt = new Date().toISOString()
    const done = await appendTask(h.platform, 'TaskCompleted', ulid, org.id, { completed_at: completedAt, signed_by: 'Ana' })
    await until(() => bodies(rxCompleted).some((b) => b.data.ulid === ulid), 8000, 'task.completed at its receiver')
    await until(() => bodies(rxAll).filter((b) => b.data.ulid === ulid).length === 2, 8000, 'both events at the task.* receiver')
    const r = rxCompleted.received.find((x) => JSON.parse(x.body).data.ulid === ulid)!
    const body = new Verifier(completed.secret).verify(r.body, r.headers) as any
    t.same(Object.keys(body).sort(), ['data', 'id', 'occurred_at', 'type'])
    t.equal(body.type, 'task.completed')
    t.match(body.id, /^msg_/)
    t.equal(r.headers['webhook-id'], body.id, 'webhook-id is the body id')
    t.equal(body.occurred_at, done.metadata.occurred_at)
    t.same(body.data, { ulid, status: 'complete', completed_at: completedAt, signed_by: 'Ana' }, 'no organization_id in the data')
    t.throws(() => new Verifier(all.secret).verify(r.body, r.headers), 'another webhook\'s secret does not verify')
    t.same(bodies(rxAll).filter((b) => b.data.ulid === ulid).map((b) => b.type).sort(), ['task.completed', 'task.created'], 'task.* hears both')
    t.notOk(bodies(rxCompleted).some((b) => b.type === 'task.created'), 'task.completed does not hear task.created')
    await new Promise((res) => setTimeout(res, 300))
    t.notOk(bodies(rxOther).some((b) => b.data.ulid === ulid), 'another organization hears nothing')
    await until(async () => (await deliveriesOf(completed.webhook.id)).data.some((d) => d.id === body.id && d.status === 'delivered'), 5000, 'settled')
    const mine = (await deliveriesOf(completed.webhook.id)).data.filter((d) => d.id === body.id)
    t.equal(mine.length, 1)
    t.match(mine[0], { type: 'task.completed', status: 'delivered', attempts: [{ attempt: 1, status_code: 200, error: null }] })
  })

  t.test('a 500 is retried on WEBHOOK_RETRY_DELAYS_MS with the same id; every attempt is in the log', async (t) => {
    const outcomes = async () => {
      const families = parsePrometheus((await h.call('GET', '/metrics')).body)
      const of = (outcome: string) => value(families, 'webhook_deliveries_total', { target: 'webhook', outcome }) ?? 0
      return { delivered: of('delivered'), failed: of('failed') }
    }
    const before = await outcomes()
    let failures = 0
    rxCompleted.answer(() => (failures++ < 2 ? 500 : 200))
    t.teardown(() => rxCompleted.answer(() => 200))
    const ulid = newUlid()
    await appendTask(h.platform, 'TaskCompleted', ulid, org.id)
    await until(async () => (await deliveriesOf(completed.webhook.id)).data.some((d) => d.status === 'delivered' && d.attempts.length === 3), 8000, 'delivered on the third attempt')
    const calls = rxCompleted.received.filter((x) => JSON.parse(x.body).data.ulid === ulid)
    t.equal(calls.length, 3)
    t.equal(new Set(calls.map((c) => c.headers['webhook-id'])).size, 1, 'the same webhook-id on every retry')
    for (const c of calls) t.doesNotThrow(() => new Verifier(completed.secret).verify(c.body, c.headers))
    const d = (await deliveriesOf(completed.webhook.id)).data.find((x) => x.id === calls[0]!.headers['webhook-id'])
    t.same(d.attempts.map((a: any) => a.status_code), [500, 500, 200])
    t.same(d.attempts.map((a: any) => a.attempt), [1, 2, 3])
    t.equal(d.attempts[0].error, 'HTTP 500')
    t.ok(new Date(d.attempts[1].attempted_at).getTime() - new Date(d.attempts[0].attempted_at).getTime() >= DELAYS[0]! - 5, 'waited the delay')
    const after = await outcomes()
    t.ok(after.failed - before.failed >= 2 && after.delivered - before.delivered >= 1, `/metrics counts the outcomes (${JSON.stringify({ before, after })})`)
  })

  t.test('schedule used up → failed; redeliver by hand with the same id; another organization gets 404', async (t) => {
    rxCompleted.answer(() => 503)
    const ulid = newUlid()
    await appendTask(h.platform, 'TaskCompleted', ulid, org.id)
    await until(async () => (await deliveriesOf(completed.webhook.id)).data.some((d) => d.status === 'failed'), 8000, 'failed')
    const failed = (await h.call('GET', `/api/v1/webhooks/${completed.webhook.id}/deliveries?status=failed`, { token: org.token })).json()
    t.equal(failed.meta.total, 1)
    const d = failed.data[0]
    t.equal(d.attempts.length, DELAYS.length + 1, 'one attempt plus one per retry delay')
    t.equal(d.next_attempt_at, null)
    t.equal((await h.call('POST', `/api/v1/webhooks/${completed.webhook.id}/deliveries/${d.id}/redeliver`, { token: other.token })).statusCode, 404)
    t.equal((await h.call('POST', `/api/v1/webhooks/${all.webhook.id}/deliveries/${d.id}/redeliver`, { token: org.token })).statusCode, 404, 'a delivery of another webhook')
    t.equal((await h.call('GET', `/api/v1/webhooks/${completed.webhook.id}/deliveries`, { token: other.token })).statusCode, 404)
    rxCompleted.answer(() => 204)
    const re = await h.call('POST', `/api/v1/webhooks/${completed.webhook.id}/deliveries/${d.id}/redeliver`, { token: org.token })
    t.equal(re.statusCode, 202, re.body)
    t.match(re.json(), { success: true, delivery: { id: d.id } })
    await until(async () => (await deliveriesOf(completed.webhook.id)).data.find((x) => x.id === d.id)?.status === 'delivered', 5000, 'redelivered')
    const last = rxCompleted.received.filter((r) => r.headers['webhook-id'] === d.id).at(-1)!
    t.equal((new Verifier(completed.secret).verify(last.body, last.headers) as any).id, d.id)
    const after = (await deliveriesOf(completed.webhook.id)).data.find((x) => x.id === d.id)
    t.equal(after.attempts.length, DELAYS.length + 2, 'the redelivery is one more attempt in the log')
    rxCompleted.answer(() => 200)
  })

  t.test('idempotent per (event, webhook): a republished or replayed bus message sends nothing twice', async (t) => {
    const ulid = newUlid()
    const e = await appendTask(h.platform, 'TaskCancelled', ulid, org.id, { reason: 'customer' })
    await until(() => bodies(rxAll).some((b) => b.data.ulid === ulid), 8000, 'task.cancelled')
    const message = eventMessage(e)
    await bg.bus.publish([message, { ...message, id: `${message.id}-replayed` }])
    await new Promise((res) => setTimeout(res, 600))
    t.equal(bodies(rxAll).filter((b) => b.data.ulid === ulid).length, 1, 'one call')
    const rows = (await sql<{ n: number }>`select count(*)::int as n from carrier_notifications where source_event_id = ${e.id}`.execute(h.platform.db)).rows[0]!
    t.equal(Number(rows.n), 1, 'one outbox row (the task.completed webhook does not hear task.cancelled)')
  })

  t.test('a deleted webhook hears nothing more; the others still do', async (t) => {
    const gone = await subscribe(org.token, rxAll.url, ['task.completed'])
    t.equal((await h.call('DELETE', `/api/v1/webhooks/${gone.webhook.id}`, { token: org.token })).statusCode, 200)
    const ulid = newUlid()
    await appendTask(h.platform, 'TaskCompleted', ulid, org.id)
    await until(() => bodies(rxCompleted).some((b) => b.data.ulid === ulid), 8000, 'the live webhook')
    await until(() => bodies(rxAll).some((b) => b.data.ulid === ulid), 8000, 'the live task.* webhook')
    await new Promise((res) => setTimeout(res, 300))
    const rows = (await sql<{ n: number }>`select count(*)::int as n from carrier_notifications where webhook_id = ${gone.webhook.id}`.execute(h.platform.db)).rows[0]!
    t.equal(Number(rows.n), 0, 'no delivery for the deleted webhook')
    t.equal(bodies(rxAll).filter((b) => b.data.ulid === ulid).length, 1, 'only the task.* webhook called that receiver')
  })

  t.test('one engine: a carrier notification and an organization webhook go through the same outbox and dispatcher', async (t) => {
    const hub = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
    const rxCarrier = await startReceiver(t)
    const car = (await h.call('POST', '/api/v1/carriers', { token: hub.token, body: { name: 'Hub', integration: 'custom', visibility: 'private', notification_url: rxCarrier.url } })).json()
    const hubHook = await subscribe(hub.token, rxAll.url, ['task.started'])
    const shipmentId = await createShipment(h.platform, { id: car.carrier.id, integration: 'custom' })
    const ulid = newUlid()
    await appendTask(h.platform, 'TaskStarted', ulid, hub.id)
    await until(() => rxCarrier.received.some((r) => JSON.parse(r.body).shipment_id === shipmentId), 8000, 'the carrier notification')
    await until(() => bodies(rxAll).some((b) => b.data.ulid === ulid), 8000, 'the organization webhook')
    const carrierCall = rxCarrier.received.find((r) => JSON.parse(r.body).shipment_id === shipmentId)!
    t.equal((new Verifier(car.hmac_secret).verify(carrierCall.body, carrierCall.headers) as any).event, 'new', 'the carrier body as before')
    const rowsNow = async () => (await sql<{ target: string; status: string; carrier_id: string | null; webhook_id: string | null }>`
      select target, status, carrier_id, webhook_id from carrier_notifications
      where shipment_id = ${shipmentId} or webhook_id = ${hubHook.webhook.id} order by target`.execute(h.platform.db)).rows
    // Received is not yet settled: the attempts are logged in small batches after the calls.
    await until(async () => (await rowsNow()).every((r) => r.status === 'delivered'), 5000, 'both rows settled')
    const rows = await rowsNow()
    t.same(rows, [
      { target: 'carrier', status: 'delivered', carrier_id: car.carrier.id, webhook_id: null },
      { target: 'webhook', status: 'delivered', carrier_id: null, webhook_id: hubHook.webhook.id },
    ])
    const log = (await h.call('GET', `/carrier/v1/notifications?limit=100`, { token: car.api_key })).json()
    t.ok(log.data.every((n: any) => n.shipment_id === shipmentId), 'the carrier\'s log shows no organization webhook')
    t.equal((await deliveriesOf(foreign.webhook.id, other.token)).meta.total, 0, 'nothing for the other organization')
  })
})
}
