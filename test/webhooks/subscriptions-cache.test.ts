// The notifier's intake keeps each organization's live subscriptions in memory (a read per batch
// otherwise): a subscription made or deleted after the organization's first events must count
// from the next event on, in this process and in another one.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { build } from '../helpers/build.js'
import type { Platform } from '../../src/platform.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { newUlid } from '../../src/shared/ids.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'
import { secondConnection } from '../helpers/test-database.js'

t.teardown(() => closeIdleConnections())

const appendTask = async (p: Platform, type: string, ulid: string, organizationId: string) => {
  await p.store.append(`task-${ulid}`, [{ type, data: { ulid, organization_id: organizationId }, metadata: { actor: { kind: 'organization', id: organizationId }, occurred_at: p.clock().toISOString() } }], 'any')
}

t.test('a webhook made after the organization\'s first events hears the next ones; a deleted one hears no more', async (t) => {
  const h = await build(t, { webhookRetryDelaysMs: [40] })
  const org = await h.createOrganization({ roles: ['carrier'] })
  const suffix = randomBytes(4).toString('hex')
  const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `SUBS_${suffix}`, subjectPrefix: `subs${suffix}` } })
  t.teardown(() => bg.stop())
  const rx = await startReceiver(t)
  const seen = () => rx.received.map((r) => (JSON.parse(r.body) as { data: { ulid: string } }).data.ulid)

  // Heard by nobody: the organization's (empty) subscriptions are now what the intake keeps.
  const unheard = newUlid()
  await appendTask(h.platform, 'TaskCreated', unheard, org.id)
  await until(async () => (await bg.metrics()).consumers.find((c) => c.name === 'organization-webhooks')?.pending === 0, 10_000, 'the intake to take it')

  const made = await h.call('POST', '/api/v1/webhooks', { token: org.token, body: { url: rx.url, events: ['task.*'] } })
  t.equal(made.statusCode, 201, made.body)
  const heard = newUlid()
  await appendTask(h.platform, 'TaskCreated', heard, org.id)
  await until(() => seen().includes(heard), 10_000, 'the new webhook to hear the next event')
  t.notOk(seen().includes(unheard), 'an event before the subscription is not sent to it')

  t.equal((await h.call('DELETE', `/api/v1/webhooks/${made.json().webhook.id}`, { token: org.token })).statusCode, 200)
  const after = newUlid()
  await appendTask(h.platform, 'TaskCreated', after, org.id)
  const marker = newUlid()
  const rx2 = await startReceiver(t)
  t.equal((await h.call('POST', '/api/v1/webhooks', { token: org.token, body: { url: rx2.url, events: ['task.*'] } })).statusCode, 201)
  await appendTask(h.platform, 'TaskCreated', marker, org.id)
  await until(() => rx2.received.length > 0, 10_000, 'the second webhook to hear the marker')
  t.notOk(seen().includes(after), 'the deleted webhook hears nothing after its deletion')
})

t.test('a subscription made through another API process counts in this one', async (t) => {
  const h = await build(t, { webhookRetryDelaysMs: [40] })
  const org = await h.createOrganization({ roles: ['carrier'] })
  const suffix = randomBytes(4).toString('hex')
  const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `SUBS2_${suffix}`, subjectPrefix: `subs2${suffix}` } })
  t.teardown(() => bg.stop())
  const rx = await startReceiver(t)
  await appendTask(h.platform, 'TaskCreated', newUlid(), org.id)
  await until(async () => (await bg.metrics()).consumers.find((c) => c.name === 'organization-webhooks')?.pending === 0, 10_000, 'the intake to take it')
  // The subscription is made through a second API process on the same database: on a server only
  // the NOTIFY of that process's projection round can tell this process's intake (the embedded
  // database has one connection: the second platform shares it and this one projects its write).
  const postgres = h.platform.database.kind === 'postgres'
  const other = await createPlatform(h.platform.config, postgres
    ? { database: await secondConnection(t, h.platform.database) }
    : { database: h.platform.database, startProjections: false })
  const otherApp = await buildApp(other, { logger: false, modules })
  t.teardown(async () => { await otherApp.close(); await other.close() })
  const made = await otherApp.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' }, payload: { url: rx.url, events: ['task.*'] } })
  t.equal(made.statusCode, 201, made.body)
  const next = newUlid()
  await until(async () => {
    if (!rx.received.length) await appendTask(h.platform, 'TaskCreated', newUlid(), org.id)
    return rx.received.length > 0
  }, 10_000, 'an event after the other process\'s subscription to reach its webhook')
  t.ok(next)
})
