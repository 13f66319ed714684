import t from 'tap'
import { build } from '../helpers/build.js'

t.test('carrier hub', async (t) => {
  const h = await build(t)
  const owner = await h.createOrganization({ name: 'Hub Owner', roles: ['carrier'], carriers_enabled: true })
  const other = await h.createOrganization({ name: 'Other Carrier Org', roles: ['carrier'], carriers_enabled: true })
  const plain = await h.createOrganization({ name: 'Not Enabled', roles: ['carrier'] })

  const create = (token: string, body: unknown) => h.call('POST', '/api/v1/carriers', { token, body })

  t.test('a suspended organization\'s carriers get 403 on the carrier API until it is unsuspended', async (t) => {
    const org = await h.createOrganization({ name: 'Suspendable', roles: ['carrier'], carriers_enabled: true })
    const made = await create(org.token, { name: 'Soon Suspended', integration: 'service_routes', visibility: 'private' })
    t.equal(made.statusCode, 201, made.body)
    const key = made.json().api_key
    t.equal((await h.call('GET', '/carrier/v1/me', { token: key })).statusCode, 200)
    t.equal((await h.admin('POST', `/organizations/${org.id}/suspend`)).statusCode, 200)
    const refused = await h.call('GET', '/carrier/v1/me', { token: key })
    t.equal(refused.statusCode, 403)
    t.equal(refused.json().code, 'organization_suspended')
    t.equal((await h.admin('POST', `/organizations/${org.id}/unsuspend`)).statusCode, 200)
    t.equal((await h.call('GET', '/carrier/v1/me', { token: key })).statusCode, 200)
  })

  t.test('an organization without carriers_enabled gets 403', async (t) => {
    const res = await create(plain.token, { name: 'X', integration: 'custom', visibility: 'private' })
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'carriers_not_enabled')
    t.equal((await h.call('GET', '/api/v1/carriers', { token: plain.token })).statusCode, 403)
  })

  let carrierId = ''
  let apiKey = ''
  let secret = ''
  t.test('create shows the API key and whsec_ secret once; the key works on /carrier/v1/me', async (t) => {
    const res = await create(owner.token, {
      name: 'Express', integration: 'custom', visibility: 'public', access_mode: 'open',
      notification_url: 'http://127.0.0.1:9/hook', service_types: [{ code: 'std', name: 'Standard' }, { code: 'exp', name: 'Express' }],
    })
    t.equal(res.statusCode, 201, res.body)
    const body = res.json()
    t.match(body.carrier.id, /^car_/)
    t.match(body.hmac_secret, /^whsec_[A-Za-z0-9+/=]+$/)
    t.match(body.api_key, /^ck_/)
    t.equal(body.carrier.certification_status, 'pending')
    t.same(body.carrier.service_types.map((s: any) => s.code), ['std', 'exp'])
    t.ok(body.carrier.service_types.every((s: any) => Number.isInteger(s.id)))
    carrierId = body.carrier.id
    apiKey = body.api_key
    secret = body.hmac_secret
    const me = await h.call('GET', '/carrier/v1/me', { token: apiKey })
    t.equal(me.statusCode, 200)
    t.equal(me.json().carrier.id, carrierId)
    t.equal(me.json().carrier.certification_status, 'pending')
    for (const k of ['id', 'name', 'integration', 'visibility', 'access_mode', 'certification_status', 'notification_url', 'quote_url', 'quote_mode', 'service_types']) {
      t.ok(k in me.json().carrier, `me has ${k}`)
    }
    const read = await h.call('GET', `/api/v1/carriers/${carrierId}`, { token: owner.token })
    t.notOk('api_key' in read.json(), 'never shown again')
    t.notOk(JSON.stringify(read.json()).includes(secret.slice(6)))
  })

  t.test('secrets are stored encrypted and keys only as hashes', async (t) => {
    const rows = await h.platform.rm.selectFrom('carrier_secrets').selectAll().where('carrier_id', '=', carrierId).execute()
    t.equal(rows.length, 1)
    t.notOk(rows[0]!.secret_encrypted.includes(secret.slice(6, 20)))
    const tokens = await h.platform.rm.selectFrom('access_tokens').selectAll().where('subject_id', '=', carrierId).execute()
    t.equal(tokens.length, 1)
    t.equal(tokens[0]!.kind, 'carrier')
    t.not(tokens[0]!.token_hash, apiKey)
  })

  t.test('validation lists every failing field, URL safety included', async (t) => {
    const res = await create(owner.token, { name: '', integration: 'fax', visibility: 'public', extra: 1 })
    t.equal(res.statusCode, 422)
    for (const k of ['name', 'integration', 'extra']) t.ok(res.json().errors[k], k)
    const urls = await create(owner.token, { name: 'U', integration: 'custom', visibility: 'private', notification_url: 'ftp://x.example/', quote_mode: 'api' })
    t.equal(urls.statusCode, 422)
    t.ok(urls.json().errors.notification_url)
    t.ok(urls.json().errors.quote_url, 'api mode needs a quote_url')
  })

  t.test('private addresses are refused unless ALLOW_PRIVATE_URLS', async (t) => {
    const strict = await build(t, { allowPrivateUrls: false })
    const o = await strict.createOrganization({ roles: ['carrier'], carriers_enabled: true })
    const res = await strict.call('POST', '/api/v1/carriers', { token: o.token, body: { name: 'L', integration: 'custom', visibility: 'private', notification_url: 'http://127.0.0.1/hook', quote_url: 'http://10.0.0.8/q' } })
    t.equal(res.statusCode, 422)
    t.match(res.json().errors.notification_url[0], /loopback/)
    t.match(res.json().errors.quote_url[0], /private/)
  })

  t.test('list, read, patch; another organization gets 404', async (t) => {
    const list = await h.call('GET', '/api/v1/carriers', { token: owner.token })
    t.same(list.json().carriers.map((c: any) => c.id), [carrierId])
    t.equal((await h.call('GET', `/api/v1/carriers/${carrierId}`, { token: other.token })).statusCode, 404)
    t.equal((await h.call('PATCH', `/api/v1/carriers/${carrierId}`, { token: other.token, body: { name: 'Stolen' } })).statusCode, 404)
    const patched = await h.call('PATCH', `/api/v1/carriers/${carrierId}`, { token: owner.token, body: { name: 'Express 2', quote_mode: 'api', quote_url: 'http://127.0.0.1:9/quote' } })
    t.equal(patched.statusCode, 200, patched.body)
    t.equal(patched.json().carrier.name, 'Express 2')
    t.equal(patched.json().carrier.quote_mode, 'api')
    const bad = await h.call('PATCH', `/api/v1/carriers/${carrierId}`, { token: owner.token, body: { quote_url: null } })
    t.equal(bad.statusCode, 422, 'api mode cannot lose its quote_url')
  })

  t.test('PATCH /carrier/v1/me changes URLs and quote mode only', async (t) => {
    const res = await h.call('PATCH', '/carrier/v1/me', { token: apiKey, body: { quote_mode: 'tariff', notification_url: 'http://127.0.0.1:9/other' } })
    t.equal(res.statusCode, 200, res.body)
    t.equal(res.json().carrier.quote_mode, 'tariff')
    t.equal(res.json().carrier.notification_url, 'http://127.0.0.1:9/other')
    const denied = await h.call('PATCH', '/carrier/v1/me', { token: apiKey, body: { visibility: 'private' } })
    t.equal(denied.statusCode, 422)
  })

  t.test('certification by the admin', async (t) => {
    const res = await h.admin('POST', `/carriers/${carrierId}/certification`, { status: 'certified' })
    t.equal(res.statusCode, 200, res.body)
    t.equal(JSON.parse(res.body).carrier.certification_status, 'certified')
    t.equal((await h.admin('POST', '/carriers/car_missing/certification', { status: 'certified' })).statusCode, 404)
    t.equal((await h.admin('POST', `/carriers/${carrierId}/certification`, { status: 'maybe' })).statusCode, 422)
    const priv = (await create(owner.token, { name: 'Own fleet', integration: 'service_routes', visibility: 'private' })).json()
    t.equal(priv.carrier.certification_status, 'not_required')
    t.equal((await h.admin('POST', `/carriers/${priv.carrier.id}/certification`, { status: 'certified' })).statusCode, 409)
  })

  t.test('service types: integer ids, idempotent by code', async (t) => {
    const a = await h.call('POST', `/api/v1/carriers/${carrierId}/service-types`, { token: owner.token, body: { code: 'eco', name: 'Economy' } })
    t.equal(a.statusCode, 201)
    const b = await h.call('POST', `/api/v1/carriers/${carrierId}/service-types`, { token: owner.token, body: { code: 'eco', name: 'Economy' } })
    t.equal(b.json().service_type.id, a.json().service_type.id)
    const me = (await h.call('GET', '/carrier/v1/me', { token: apiKey })).json()
    t.same(me.carrier.service_types.map((s: any) => s.code), ['std', 'exp', 'eco'])
  })

  t.test('rotation: new key works, old key works for 24 h then 401; both secrets valid during overlap', async (t) => {
    const res = await h.call('POST', `/api/v1/carriers/${carrierId}/keys`, { token: owner.token })
    t.equal(res.statusCode, 201, res.body)
    const rotated = res.json()
    t.not(rotated.api_key, apiKey)
    t.match(rotated.hmac_secret, /^whsec_/)
    t.equal((await h.call('GET', '/carrier/v1/me', { token: rotated.api_key })).statusCode, 200)
    t.equal((await h.call('GET', '/carrier/v1/me', { token: apiKey })).statusCode, 200, 'old key still valid')
    const { signingSecrets } = await import('../../src/carriers/credentials.js')
    t.same(new Set(await signingSecrets(h.platform, carrierId)), new Set([rotated.hmac_secret, secret]))
    const realClock = h.platform.clock
    h.platform.clock = () => new Date(Date.now() + 24 * 3600 * 1000 + 60_000)
    t.teardown(() => { h.platform.clock = realClock })
    t.equal((await h.call('GET', '/carrier/v1/me', { token: apiKey })).statusCode, 401, 'old key expired after 24 h')
    t.equal((await h.call('GET', '/carrier/v1/me', { token: rotated.api_key })).statusCode, 200)
    t.same(await signingSecrets(h.platform, carrierId), [rotated.hmac_secret])
    h.platform.clock = realClock
  })

  t.test('carrier API refuses a wrong key and an organization token (401)', async (t) => {
    t.equal((await h.call('GET', '/carrier/v1/me', { token: 'ck_wrong' })).statusCode, 401)
    t.equal((await h.call('GET', '/carrier/v1/me', { token: owner.token })).statusCode, 401)
    t.equal((await h.call('GET', '/carrier/v1/me')).statusCode, 401)
  })
})
