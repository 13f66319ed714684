import t from 'tap'
import { build } from '../../helpers/build.js'
import type { HttpModule } from '../../../src/http/module.js'

/** A carrier-only endpoint of the kind other modules add, behind `app.requireCarrierRole`. */
const carrierOnly: HttpModule = {
  name: 'carrier-only-test',
  async routes(app) {
    app.get('/test/carrier-only', { preHandler: app.requireCarrierRole }, async () => ({ ok: true }))
    app.post('/test/carrier-only', { preHandler: app.requireCarrierRole }, async (_req, reply) => reply.code(201).send({ ok: true }))
  },
}

t.test('organization tokens, admin token, roles and BASE_DOMAIN', async (t) => {
  const h = await build(t, { baseDomain: 'ship.test' }, {}, { extraModules: [carrierOnly] })
  const alpha = await h.createOrganization({ roles: ['carrier'] })
  const beta = await h.createOrganization({ roles: ['shipper'] })
  const both = await h.createOrganization({ roles: ['carrier', 'shipper'] })
  const my = (token: string, host?: string) => h.call('GET', '/api/v1/organizations/my', { token, headers: host ? { host } : {} })

  t.test('BASE_DOMAIN: another organization\'s token on a subdomain is a 403', async (t) => {
    const sub = alpha.organization.subdomain as string
    const own = await my(alpha.token, `${sub}.ship.test`)
    t.equal(own.statusCode, 200)
    t.equal(own.json().organization.id, alpha.id)
    t.equal((await my(alpha.token, `${sub.toUpperCase()}.SHIP.test:8080`)).statusCode, 200, 'host compared without case or port')
    const foreign = await my(beta.token, `${sub}.ship.test`)
    t.equal(foreign.statusCode, 403)
    t.equal(foreign.json().code, 'wrong_subdomain')
    t.equal((await my(beta.token, `nobody.ship.test`)).statusCode, 403, 'an unknown subdomain is not the token\'s either')
    t.equal((await my(beta.token, 'ship.test')).statusCode, 200, 'the bare domain accepts any organization')
    t.equal((await my(beta.token, 'localhost')).statusCode, 200, 'hosts outside BASE_DOMAIN are not checked')
  })

  t.test('a shipper-only organization gets 403 on carrier-only endpoints', async (t) => {
    const refused = await h.call('GET', '/api/v1/test/carrier-only', { token: beta.token })
    t.equal(refused.statusCode, 403)
    t.same(refused.json(), { message: refused.json().message, code: 'carrier_role_required' })
    const refusedPost = await h.call('POST', '/api/v1/test/carrier-only', { token: beta.token, body: {} })
    t.equal(refusedPost.statusCode, 403)
    t.equal((await h.call('GET', '/api/v1/test/carrier-only', { token: alpha.token })).statusCode, 200)
    t.equal((await h.call('GET', '/api/v1/test/carrier-only', { token: both.token })).statusCode, 200)
    t.equal((await h.call('GET', '/api/v1/test/carrier-only')).statusCode, 401, 'no token: 401 before the role check')
  })

  t.test('tokens: random, shown once, stored as hashes; malformed headers are 401', async (t) => {
    t.match(alpha.token, /^sk_[A-Za-z0-9_-]{40,}$/)
    t.not(alpha.token, beta.token)
    const rows = await h.platform.rm.selectFrom('access_tokens').select(['token_hash', 'token_id']).execute()
    t.ok(rows.length >= 3)
    for (const r of rows) {
      t.match(r.token_hash, /^[0-9a-f]{64}$/)
      t.not(r.token_hash, alpha.token)
    }
    const events = await h.platform.db.selectFrom('es_events' as any).select('data' as any).execute() as Array<{ data: unknown }>
    t.notOk(JSON.stringify(events).includes(alpha.token), 'no event carries the token itself')
    for (const authorization of ['Token abc', 'Bearer', `Bearer ${alpha.token} extra`, `bearer ${alpha.token.slice(0, -1)}`]) {
      const res = await h.app.inject({ method: 'GET', url: '/api/v1/organizations/my', headers: { authorization } })
      t.equal(res.statusCode, 401, authorization.slice(0, 20))
      t.equal(res.json().code, 'unauthenticated')
    }
    t.equal((await h.app.inject({ method: 'GET', url: '/api/v1/organizations/my', headers: { authorization: `bearer ${alpha.token}` } })).statusCode, 200, 'the scheme is case-insensitive')
  })

  t.test('each API area takes only its own credential', async (t) => {
    t.equal((await h.call('POST', '/admin/v1/organizations/x/suspend', { token: alpha.token })).statusCode, 401, 'an organization token is not an admin token')
    t.equal((await h.call('POST', '/admin/v1/organizations/x/suspend', { token: 'test-admin-tokeN' })).statusCode, 401)
    t.equal((await h.call('GET', '/api/v1/organizations/my', { token: 'test-admin-token' })).statusCode, 401, 'the admin token is not an organization token')
    t.equal((await h.call('GET', '/carrier/v1/anything', { token: alpha.token })).statusCode, 404, 'unknown carrier route')
  })

  t.test('revocation and suspension take effect on the next call', async (t) => {
    const extra = (await h.admin('POST', `/organizations/${both.id}/tokens`)).json()
    t.equal((await my(extra.access_token)).statusCode, 200)
    await h.admin('DELETE', `/tokens/${extra.token_id}`)
    t.equal((await my(extra.access_token)).statusCode, 401)
    t.equal((await my(both.token)).statusCode, 200)
    await h.admin('POST', `/organizations/${both.id}/suspend`)
    t.equal((await my(both.token)).statusCode, 403)
    t.equal((await h.call('GET', '/api/v1/test/carrier-only', { token: both.token })).statusCode, 403)
    await h.admin('POST', `/organizations/${both.id}/unsuspend`)
    t.equal((await my(both.token)).statusCode, 200)
  })
})
