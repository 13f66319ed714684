import t from 'tap'
import { Webhook as Verifier } from 'standardwebhooks'
import { sql } from 'kysely'
import { build } from '../helpers/build.js'
import { decryptSecret } from '../../src/shared/secret-box.js'
import { secretContext } from '../../src/webhooks/endpoint.js'

t.test('organization webhooks: subscriptions end to end', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const create = (body: object, token = carrier.token) => h.call('POST', '/api/v1/webhooks', { token, body })

  const res = await create({ url: 'http://127.0.0.1:9/hooks', events: ['task.*', 'task.completed', 'route.published', 'custom.parcel_scanned'] })
  t.equal(res.statusCode, 201, res.body)
  const made = res.json()

  t.test('created: whk_ id, the patterns, the whsec_ secret shown once and stored sealed', async (t) => {
    t.equal(made.success, true)
    t.match(made.webhook, { url: 'http://127.0.0.1:9/hooks', events: ['task.*', 'task.completed', 'route.published', 'custom.parcel_scanned'] })
    t.match(made.webhook.id, /^whk_[0-9a-z]{20}$/)
    t.match(made.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    t.doesNotThrow(() => new Verifier(made.secret), 'a secret the Standard Webhooks library accepts')
    const got = await h.call('GET', `/api/v1/webhooks/${made.webhook.id}`, { token: carrier.token })
    t.equal(got.statusCode, 200)
    t.same(got.json(), made.webhook)
    t.notOk(got.body.includes(made.secret), 'never shown again')
    const list = await h.call('GET', '/api/v1/webhooks', { token: carrier.token })
    t.notOk(list.body.includes('whsec_'))
    const row = await h.platform.rm.selectFrom('webhooks').selectAll().where('id', '=', made.webhook.id).executeTakeFirstOrThrow()
    t.not(row.secret_encrypted, made.secret)
    t.notOk(row.secret_encrypted.includes(made.secret.slice(6)), 'not in the clear in the read model')
    t.equal(decryptSecret(h.platform.secretsKey, row.secret_encrypted, secretContext(made.webhook.id)), made.secret)
    t.throws(() => decryptSecret(h.platform.secretsKey, row.secret_encrypted, secretContext('whk_other')), 'bound to its webhook')
    const events = await h.platform.store.readStream(`webhook-${made.webhook.id}`)
    t.equal(events[0]!.type, 'WebhookCreated')
    t.notOk(JSON.stringify(events).includes(made.secret.slice(6)), 'not in the clear in the event log')
  })

  t.test('bad input: 422 naming every failing field by dot path, all at once', async (t) => {
    const bad = await create({ url: 'ftp://example.com/x', events: ['task.completed', 'task.exploded', 'nope.*', 'custom.', '*'] })
    t.equal(bad.statusCode, 422, bad.body)
    const errors = bad.json().errors
    t.same(Object.keys(errors).sort(), ['events.1', 'events.2', 'events.3', 'events.4', 'url'])
    const empty = await create({ url: 'not a url', events: [] })
    t.equal(empty.statusCode, 422)
    t.same(Object.keys(empty.json().errors).sort(), ['events', 'url'])
    const shape = await create({ url: 42, events: 'task.*', extra: true })
    t.equal(shape.statusCode, 422)
    t.ok(shape.json().errors.url && shape.json().errors.events, shape.body)
    const count = await h.platform.rm.selectFrom('webhooks').select((eb) => eb.fn.countAll<string>().as('n')).where('organization_id', '=', carrier.id).executeTakeFirstOrThrow()
    t.equal(Number(count.n), 1, 'nothing written by a refused request')
  })

  t.test('loopback and private URLs are refused by the carrier URLs\' SSRF rules unless ALLOW_PRIVATE_URLS', async (t) => {
    const strict = await build(t, { allowPrivateUrls: false })
    const org = await strict.createOrganization({ roles: ['carrier'] })
    for (const url of ['http://127.0.0.1:8080/x', 'http://10.0.0.8/x', 'http://169.254.169.254/latest', 'http://localhost/x']) {
      const r = await strict.call('POST', '/api/v1/webhooks', { token: org.token, body: { url, events: ['task.*'] } })
      t.equal(r.statusCode, 422, url)
      t.same(Object.keys(r.json().errors), ['url'], url)
    }
  })

  t.test('a shipper-only organization gets 403 on every webhook route', async (t) => {
    for (const [method, url] of [['POST', '/api/v1/webhooks'], ['GET', '/api/v1/webhooks'], ['GET', `/api/v1/webhooks/${made.webhook.id}`],
      ['DELETE', `/api/v1/webhooks/${made.webhook.id}`], ['GET', `/api/v1/webhooks/${made.webhook.id}/deliveries`],
      ['POST', `/api/v1/webhooks/${made.webhook.id}/deliveries/msg_x/redeliver`]] as const) {
      const r = await h.call(method, url, { token: shipper.token, body: method === 'POST' ? { url: 'http://127.0.0.1:9/', events: ['task.*'] } : undefined })
      t.equal(r.statusCode, 403, `${method} ${url}`)
      t.equal(r.json().code, 'carrier_role_required')
    }
  })

  t.test('tenant isolation: another organization\'s webhook is 404 everywhere and absent from its list', async (t) => {
    for (const [method, url] of [['GET', `/api/v1/webhooks/${made.webhook.id}`], ['DELETE', `/api/v1/webhooks/${made.webhook.id}`],
      ['GET', `/api/v1/webhooks/${made.webhook.id}/deliveries`], ['POST', `/api/v1/webhooks/${made.webhook.id}/deliveries/msg_x/redeliver`]] as const) {
      const r = await h.call(method, url, { token: other.token })
      t.equal(r.statusCode, 404, `${method} ${url}`)
    }
    const list = (await h.call('GET', '/api/v1/webhooks', { token: other.token })).json()
    t.equal(list.meta.total, 0)
    t.same(list.data, [])
    t.equal((await h.call('GET', `/api/v1/webhooks/${made.webhook.id}`, { token: carrier.token })).statusCode, 200, 'still there for its owner')
  })

  t.test('listing: {data, links, meta}, paginated, oldest first', async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await create({ url: `http://127.0.0.1:9/h${i}`, events: ['task.created'] })).statusCode, 201)
    const page = (await h.call('GET', '/api/v1/webhooks?perPage=2', { token: carrier.token })).json()
    t.equal(page.data.length, 2)
    t.match(page.meta, { total: 4, per_page: 2, current_page: 1, last_page: 2 })
    t.equal(page.data[0].id, made.webhook.id)
    t.ok(page.links.next)
    const second = (await h.call('GET', '/api/v1/webhooks?perPage=2&page=2', { token: carrier.token })).json()
    t.same(second.data.map((w: any) => w.url), ['http://127.0.0.1:9/h1', 'http://127.0.0.1:9/h2'])
  })

  t.test('delete: gone (404 after), pending deliveries end as failed, the log stays in the outbox', async (t) => {
    const w = (await create({ url: 'http://127.0.0.1:9/del', events: ['task.*'] })).json().webhook
    await sql`insert into carrier_notifications (id, target, source_event_id, webhook_id, organization_id, event, occurred_at, payload, next_attempt_at)
      values ('msg_pending_del', 'webhook', 'evt_del', ${w.id}, ${carrier.id}, 'task.created', now(), '{}', now() + interval '1 hour')`.execute(h.platform.db)
    const del = await h.call('DELETE', `/api/v1/webhooks/${w.id}`, { token: carrier.token })
    t.equal(del.statusCode, 200, del.body)
    t.same(del.json(), { success: true })
    t.equal((await h.call('GET', `/api/v1/webhooks/${w.id}`, { token: carrier.token })).statusCode, 404)
    t.equal((await h.call('DELETE', `/api/v1/webhooks/${w.id}`, { token: carrier.token })).statusCode, 404, 'twice: unknown')
    t.notOk((await h.call('GET', '/api/v1/webhooks?perPage=100', { token: carrier.token })).json().data.some((x: any) => x.id === w.id))
    const row = (await sql<{ status: string; last_error: string }>`select status, last_error from carrier_notifications where id = 'msg_pending_del'`.execute(h.platform.db)).rows[0]!
    t.same(row, { status: 'failed', last_error: 'the webhook was deleted' })
  })
})
