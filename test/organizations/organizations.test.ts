import t from 'tap'
import { build } from '../helpers/build.js'

t.test('organization endpoints end to end', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ name: 'Fast Carrier', roles: ['carrier'], currency: 'ARS', market: 'Argentina' })
  const shipper = await h.createOrganization({ name: 'Big Shipper', roles: ['shipper'] })

  t.test('GET /organizations/my returns the token\'s organization', async (t) => {
    const res = await h.call('GET', '/api/v1/organizations/my', { token: carrier.token })
    t.equal(res.statusCode, 200)
    const org = res.json().organization
    t.equal(org.id, carrier.id)
    t.match(org.id, /^org_/)
    t.equal(org.currency, 'ARS')
    t.same(Object.keys(org).sort(), ['carriers_enabled', 'currency', 'custom_domain', 'default_service_type', 'id', 'locale', 'market', 'name', 'operational_address_id', 'roles', 'subdomain', 'suspended_at', 'timezone', 'visual_settings'].sort())
  })

  t.test('401 without or with a bad token', async (t) => {
    t.equal((await h.call('GET', '/api/v1/organizations/my')).statusCode, 401)
    const bad = await h.call('GET', '/api/v1/organizations/my', { token: 'sk_nope' })
    t.equal(bad.statusCode, 401)
    t.equal(bad.json().code, 'unauthenticated')
  })

  t.test('a taken subdomain is a 422 on subdomain', async (t) => {
    const res = await h.admin('POST', '/organizations', { name: 'Dup', subdomain: carrier.organization.subdomain, roles: ['shipper'] })
    t.equal(res.statusCode, 422)
    t.ok(res.json().errors.subdomain)
  })

  t.test('admin create validates every field at once', async (t) => {
    const res = await h.admin('POST', '/organizations', { name: '', subdomain: 'Bad_Sub', roles: ['pilot'], extra: 1, currency: 'XXXX', timezone: 'Mars/Olympus', carriers_enabled: true })
    t.equal(res.statusCode, 422)
    const errors = res.json().errors
    // The module's checks (time zone, carriers_enabled) join the schema's errors in the same 422.
    for (const k of ['name', 'subdomain', 'roles.0', 'extra', 'currency', 'timezone', 'carriers_enabled']) t.ok(errors[k], `names ${k}`)
    t.ok(errors.currency.includes('The currency must be an ISO 4217 code.'))
  })

  t.test('admin API refuses organization tokens', async (t) => {
    const res = await h.call('POST', '/admin/v1/organizations', { token: carrier.token, body: { name: 'x', subdomain: 'xyz', roles: ['shipper'] } })
    t.equal(res.statusCode, 401)
  })

  t.test('contracts listing with license, filter, sort and pagination', async (t) => {
    const shippers = []
    for (const name of ['Zeta Foods', 'Alpha Retail', 'Mid Market']) {
      const s = await h.createOrganization({ name, roles: ['shipper'], market: name === 'Mid Market' ? 'Chile' : 'Argentina' })
      await h.signContract(carrier.id, s.id)
      shippers.push(s)
    }
    const res = await h.call('GET', '/api/v1/organizations/my/contracts?perPage=2', { token: carrier.token })
    t.equal(res.statusCode, 200)
    const body = res.json().organizations
    t.same(body.data.map((o: any) => o.name), ['Alpha Retail', 'Mid Market'])
    t.same(body.meta, { total: 3, per_page: 2, current_page: 1, last_page: 2, from: 1, to: 2 })
    t.match(body.links.next, /page=2/)
    t.equal(body.links.prev, null)
    const page2 = (await h.call('GET', '/api/v1/organizations/my/contracts?perPage=2&page=2', { token: carrier.token })).json().organizations
    t.same(page2.data.map((o: any) => o.name), ['Zeta Foods'])
    t.same(page2.meta.from, 3)
    const desc = (await h.call('GET', '/api/v1/organizations/my/contracts?sort=-organizations.name', { token: carrier.token })).json().organizations
    t.same(desc.data.map((o: any) => o.name), ['Zeta Foods', 'Mid Market', 'Alpha Retail'])
    t.equal(desc.meta.per_page, 10, 'perPage defaults to 10')
    const filtered = (await h.call('GET', '/api/v1/organizations/my/contracts?filter[global]=chile', { token: carrier.token })).json().organizations
    t.same(filtered.data.map((o: any) => o.name), ['Mid Market'], 'filter matches the market')
    const asShipper = (await h.call('GET', '/api/v1/organizations/my/contracts?license=carrier', { token: shippers[0]!.token })).json().organizations
    t.same(asShipper.data.map((o: any) => o.id), [carrier.id])
    const bad = await h.call('GET', '/api/v1/organizations/my/contracts?license=pilot&perPage=0&sort=name', { token: carrier.token })
    t.equal(bad.statusCode, 422)
    for (const k of ['license', 'perPage', 'sort']) t.ok(bad.json().errors[k], `names ${k}`)
    const dup = await h.admin('POST', '/contracts', { carrier_id: carrier.id, shipper_id: shippers[0]!.id })
    t.equal(dup.statusCode, 409)
    const wrong = await h.admin('POST', '/contracts', { carrier_id: shipper.id, shipper_id: 'org_missing' })
    t.equal(wrong.statusCode, 422)
    t.ok(wrong.json().errors.carrier_id)
    t.ok(wrong.json().errors.shipper_id)
  })

  t.test('places: gazetteer, E.164 phone, validation, tenant isolation', async (t) => {
    const res = await h.call('POST', '/api/v1/organizations/my/places', {
      token: carrier.token,
      body: { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'cordoba', state: 'Córdoba', country: 'ar', phone: '0351 422-1234' },
    })
    t.equal(res.statusCode, 201, res.body)
    const place = res.json().place
    t.match(place.id, /^ple_/)
    t.equal(place.org_id, carrier.internalId)
    t.equal(place.city.name, 'Córdoba')
    t.ok(Number.isInteger(place.city.id))
    t.same(place.state, { code: 'X', name: 'Córdoba' })
    t.same(place.country, { code: 'AR', name: 'Argentina' })
    t.equal(place.phone, '+543514221234')
    t.equal(place.phone_raw, '0351 422-1234')
    t.ok(place.geo_latitude < -30 && place.geo_latitude > -32)
    const list = (await h.call('GET', '/api/v1/organizations/my/places', { token: carrier.token })).json().places
    t.same(list.map((p: any) => p.id), [place.id])
    const other = (await h.call('GET', '/api/v1/organizations/my/places', { token: shipper.token })).json().places
    t.same(other, [], 'another tenant sees none of them')
    const my = (await h.call('GET', '/api/v1/organizations/my', { token: carrier.token })).json().organization
    t.equal(my.operational_address_id, place.id, 'the first place becomes the operational address')

    const bad = await h.call('POST', '/api/v1/organizations/my/places', {
      token: carrier.token,
      body: { name: 'x'.repeat(101), street_number: '12345678901', floor: '123456', geo_latitude: 91, geo_longitude: -181, email: 'nope', unknown: true },
    })
    t.equal(bad.statusCode, 422)
    // With the schema's errors, the cross-field ones: no city_id, so city and country are required.
    for (const k of ['name', 'street', 'street_number', 'floor', 'geo_latitude', 'geo_longitude', 'email', 'unknown', 'city', 'country']) t.ok(bad.json().errors[k], `names ${k}`)
    const badGeo = await h.call('POST', '/api/v1/organizations/my/places', { token: carrier.token, body: { name: 'x', street: 's', street_number: '1', city: 'Nowhere', country: 'QQ', phone: '123' } })
    t.equal(badGeo.statusCode, 422)
    t.ok(badGeo.json().errors.country)
    const newTown = await h.call('POST', '/api/v1/organizations/my/places', { token: carrier.token, body: { name: 'x', street: 's', street_number: '1', city: 'Villa Inventada', state: 'Córdoba', country: 'AR' } })
    t.equal(newTown.statusCode, 201, 'an unknown town in a known state is recorded')
    t.ok(newTown.json().place.city.id >= 10_000_000)
  })

  t.test('malformed JSON is a 400; no input produces a 500', async (t) => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/organizations/my/places', headers: { authorization: `Bearer ${carrier.token}`, 'content-type': 'application/json' }, payload: '{bad' })
    t.equal(res.statusCode, 400)
    t.equal(res.json().code, 'invalid_json')
    const notObject = await h.call('POST', '/api/v1/organizations/my/places', { token: carrier.token, body: [1, 2] })
    t.equal(notObject.statusCode, 422)
    for (const key of ['constructor', 'valueOf', '__proto__']) {
      const res = await h.call('POST', '/api/v1/organizations/my/places', { token: carrier.token, body: `{"${key}": 1, "name": "x"}`, headers: { 'content-type': 'application/json' } })
      t.equal(res.statusCode, 422, `${key}: ${res.body}`)
      t.ok(res.json().errors?.[key], `${key} is named`)
    }
  })

  t.test('suspension: 403 on every call, then back', async (t) => {
    const s = await h.createOrganization({ roles: ['shipper'] })
    const sus = await h.admin('POST', `/organizations/${s.id}/suspend`)
    t.equal(sus.statusCode, 200)
    t.ok(sus.json().organization.suspended_at)
    const res = await h.call('GET', '/api/v1/organizations/my', { token: s.token })
    t.equal(res.statusCode, 403)
    t.equal(res.json().code, 'organization_suspended')
    await h.admin('POST', `/organizations/${s.id}/unsuspend`)
    t.equal((await h.call('GET', '/api/v1/organizations/my', { token: s.token })).statusCode, 200)
    t.equal((await h.admin('POST', '/organizations/org_unknown/suspend')).statusCode, 404)
  })

  t.test('tokens: issue another, revoke', async (t) => {
    const res = await h.admin('POST', `/organizations/${shipper.id}/tokens`)
    t.equal(res.statusCode, 201)
    const { access_token, token_id } = res.json()
    t.equal((await h.call('GET', '/api/v1/organizations/my', { token: access_token })).statusCode, 200)
    t.equal((await h.admin('DELETE', `/tokens/${token_id}`)).statusCode, 200)
    t.equal((await h.call('GET', '/api/v1/organizations/my', { token: access_token })).statusCode, 401)
    t.equal((await h.call('GET', '/api/v1/organizations/my', { token: shipper.token })).statusCode, 200, 'the other token still works')
    const stored = await h.platform.rm.selectFrom('access_tokens').select('token_hash').where('token_id', '=', token_id).executeTakeFirstOrThrow()
    t.not(stored.token_hash, access_token, 'only the hash is stored')
  })
})
