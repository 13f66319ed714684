import t from 'tap'
import { AuthCache } from '../../src/http/auth-cache.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { build } from '../helpers/build.js'

const entry = (org: string) => ({ tokenId: `tok_${org}`, expiresAt: null, organization: { id: org } })

t.test('AuthCache: ttl, invalidation, generation, bound', async (t) => {
  let now = 1000
  const cache = new AuthCache<{ id: string }>({ ttlMs: 100, maxEntries: 3, now: () => now })
  cache.set('h1', 'org_a', entry('org_a'), cache.begin())
  t.equal(cache.get('h1')?.organization.id, 'org_a')
  now += 100
  t.equal(cache.get('h1'), undefined, 'expired after ttl')

  cache.set('h1', 'org_a', entry('org_a'), cache.begin())
  cache.set('h2', 'org_b', entry('org_b'), cache.begin())
  cache.dropOrganization('org_a')
  t.equal(cache.get('h1'), undefined, 'dropped with its organization')
  t.ok(cache.get('h2'), 'others kept')

  const started = cache.begin()
  cache.dropOrganization('org_c')
  cache.set('h3', 'org_c', entry('org_c'), started)
  t.equal(cache.get('h3'), undefined, 'a load that began before an invalidation is not stored')

  for (const h of ['h4', 'h5', 'h6']) cache.set(h, 'org_d', entry('org_d'), cache.begin())
  t.equal(cache.size, 3, 'bounded')
  t.equal(cache.get('h2'), undefined, 'the oldest went first')

  cache.dropOrganization('org_d')
  t.equal(cache.size, 0, 'an organization\'s entries all go at once')
  cache.set('h7', 'org_e', entry('org_e'), cache.begin())
  cache.set('h7', 'org_f', entry('org_f'), cache.begin())
  cache.dropOrganization('org_e')
  t.equal(cache.get('h7')?.organization.id, 'org_f', 'a replaced entry belongs to its new organization only')

  const off = new AuthCache<{ id: string }>({ ttlMs: 0, maxEntries: 3 })
  off.set('h', 'o', entry('o'), off.begin())
  t.equal(off.size, 0, 'ttl 0 disables')
})

t.test('another process\'s revocation and suspension reach this one by NOTIFY, well before the ttl', async (t) => {
  const h = await build(t)
  // A second API process on the same database, caching for a minute: only the NOTIFY can expire its entries.
  const other = await createPlatform({ ...h.platform.config, authCacheTtlMs: 60_000 }, { database: h.platform.database, startProjections: false })
  const otherApp = await buildApp(other, { logger: false, modules })
  t.teardown(async () => { await otherApp.close(); await other.close() })
  const my = (token: string) => otherApp.inject({ method: 'GET', url: '/api/v1/organizations/my', headers: { authorization: `Bearer ${token}` } })
  const eventually = async (fn: () => Promise<number>, want: number) => {
    const start = Date.now()
    let got = await fn()
    while (got !== want && Date.now() - start < 3000) { await new Promise((r) => setTimeout(r, 10)); got = await fn() }
    return { got, ms: Date.now() - start }
  }

  const org = await h.createOrganization()
  const extra = (await h.admin('POST', `/organizations/${org.id}/tokens`)).json()
  t.equal((await my(extra.access_token)).statusCode, 200)
  t.equal((await my(org.token)).statusCode, 200)

  await h.admin('DELETE', `/tokens/${extra.token_id}`)
  const revoked = await eventually(async () => (await my(extra.access_token)).statusCode, 401)
  t.equal(revoked.got, 401, `revocation seen by the other process after ${revoked.ms} ms`)
  t.ok(revoked.ms < 2000)

  await h.admin('POST', `/organizations/${org.id}/suspend`)
  const suspended = await eventually(async () => (await my(org.token)).statusCode, 403)
  t.equal(suspended.got, 403, `suspension seen after ${suspended.ms} ms`)
  await h.admin('POST', `/organizations/${org.id}/unsuspend`)
  const back = await eventually(async () => (await my(org.token)).statusCode, 200)
  t.equal(back.got, 200, `unsuspension seen after ${back.ms} ms`)
})

t.test('in the process that made the change, the very next request sees it', async (t) => {
  const h = await build(t, { authCacheTtlMs: 60_000 })
  const org = await h.createOrganization()
  const my = () => h.call('GET', '/api/v1/organizations/my', { token: org.token })
  t.equal((await my()).json().organization.operational_address_id, null)
  const place = await h.call('POST', '/api/v1/organizations/my/places', { token: org.token, body: { name: 'Depot', street: 'Av. Colón', street_number: '1', city: 'Córdoba', state: 'Córdoba', country: 'AR' } })
  t.equal(place.statusCode, 201)
  t.equal((await my()).json().organization.operational_address_id, place.json().place.id, 'the organization\'s own write is visible at once')
  await h.admin('POST', `/organizations/${org.id}/suspend`)
  t.equal((await my()).statusCode, 403, 'an admin write is visible at once')
})
