import t from 'tap'
import { build } from '../helpers/build.js'

t.test('users: dispatchers and drivers end to end', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })

  const create = (body: object, token = carrier.token) => h.call('POST', '/api/v1/users', { token, body })

  const driverRes = await create({ name: 'Dana Driver', email: 'dana@example.com', phone: '+54 9 11 4321-5678', role: 'driver' })
  t.equal(driverRes.statusCode, 201, driverRes.body)
  const driver = driverRes.json()
  const dispatcherRes = await create({ name: 'Sam Dispatcher', email: 'sam@example.com', role: 'dispatcher' })
  t.equal(dispatcherRes.statusCode, 201, dispatcherRes.body)
  const dispatcher = dispatcherRes.json()

  t.test('the created user, its token shown once, stored only as a hash', async (t) => {
    t.equal(driver.success, true)
    t.match(driver.user, { name: 'Dana Driver', email: 'dana@example.com', phone: '+5491143215678', role: 'driver', status: 'active', deactivated_at: null })
    t.match(driver.user.id, /^usr_/)
    t.match(driver.access_token, /^sk_/)
    const got = await h.call('GET', `/api/v1/users/${driver.user.id}`, { token: carrier.token })
    t.equal(got.statusCode, 200)
    t.notOk('access_token' in got.json())
    const rows = await h.platform.rm.selectFrom('access_tokens').selectAll().where('subject_id', '=', driver.user.id).execute()
    t.equal(rows.length, 1)
    t.equal(rows[0]!.kind, 'user')
    t.not(rows[0]!.token_hash, driver.access_token)
  })

  t.test('a dispatcher acts as the organization', async (t) => {
    const me = await h.call('GET', '/api/v1/organizations/my', { token: dispatcher.access_token })
    t.equal(me.statusCode, 200)
    t.equal(me.json().organization.id, carrier.id)
    const list = await h.call('GET', '/api/v1/users', { token: dispatcher.access_token })
    t.equal(list.statusCode, 200)
    t.equal(list.json().meta.total, 2)
    const made = await create({ name: 'Made By Dispatcher', email: 'made@example.com', role: 'driver' }, dispatcher.access_token)
    t.equal(made.statusCode, 201)
    const events = await h.platform.store.readStream(`user-${made.json().user.id}`)
    t.same(events[0]!.metadata.actor, { kind: 'user', id: dispatcher.user.id }, 'the dispatcher is the actor')
  })

  t.test('a driver\'s token is refused everywhere it is not opened (403 with a code)', async (t) => {
    for (const [method, url] of [['GET', '/api/v1/users'], ['GET', '/api/v1/organizations/my'], ['GET', '/api/v1/shipments'], ['POST', '/api/v1/users']] as const) {
      const res = await h.call(method, url, { token: driver.access_token, body: method === 'POST' ? {} : undefined })
      t.equal(res.statusCode, 403, `${method} ${url}`)
      t.equal(res.json().code, 'driver_not_allowed')
    }
  })

  t.test('listing: paginated (perPage default 20), filtered by role and status', async (t) => {
    for (let i = 0; i < 20; i++) t.equal((await create({ name: `Driver ${i}`, email: `d${i}@example.com`, role: 'driver' })).statusCode, 201)
    const first = (await h.call('GET', '/api/v1/users', { token: carrier.token })).json()
    t.equal(first.data.length, 20)
    t.match(first.meta, { total: 23, per_page: 20, current_page: 1, last_page: 2, from: 1, to: 20 })
    t.ok(first.links.next)
    const second = (await h.call('GET', '/api/v1/users?page=2&perPage=20', { token: carrier.token })).json()
    t.equal(second.data.length, 3)
    t.match(second.meta, { from: 21, to: 23 })
    const dispatchers = (await h.call('GET', '/api/v1/users?role=dispatcher', { token: carrier.token })).json()
    t.same(dispatchers.data.map((u: any) => u.id), [dispatcher.user.id])
  })

  t.test('422 names every failing field at once', async (t) => {
    const res = await create({ name: '', email: 'not-an-email', phone: '12', role: 'pilot', extra: true })
    t.equal(res.statusCode, 422)
    const errors = res.json().errors
    for (const k of ['name', 'email', 'role', 'extra']) t.ok(errors[k], `names ${k}`)
    const phone = await create({ name: 'P', email: 'p@example.com', phone: '12', role: 'driver' })
    t.equal(phone.statusCode, 422)
    t.ok(phone.json().errors.phone)
    const dup = await create({ name: 'Again', email: 'DANA@example.com', role: 'driver' })
    t.equal(dup.statusCode, 422)
    t.ok(dup.json().errors.email, 'an active user\'s email is taken, whatever its case')
    const patch = await h.call('PATCH', `/api/v1/users/${driver.user.id}`, { token: carrier.token, body: {} })
    t.equal(patch.statusCode, 422)
  })

  t.test('update: partial; the role change applies to the token at once', async (t) => {
    const temp = (await create({ name: 'Temp', email: 'temp@example.com', role: 'driver' })).json()
    t.equal((await h.call('GET', '/api/v1/users', { token: temp.access_token })).statusCode, 403)
    const res = await h.call('PATCH', `/api/v1/users/${temp.user.id}`, { token: carrier.token, body: { role: 'dispatcher', phone: null } })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json().user, { role: 'dispatcher', name: 'Temp', phone: null })
    t.equal((await h.call('GET', '/api/v1/users', { token: temp.access_token })).statusCode, 200, 'now a dispatcher')
  })

  t.test('deactivation revokes the token at once; the user stays readable', async (t) => {
    const temp = (await create({ name: 'Leaving', email: 'leaving@example.com', role: 'dispatcher' })).json()
    t.equal((await h.call('GET', '/api/v1/organizations/my', { token: temp.access_token })).statusCode, 200, 'works (and is cached)')
    const res = await h.call('POST', `/api/v1/users/${temp.user.id}/deactivate`, { token: carrier.token })
    t.equal(res.statusCode, 200)
    t.match(res.json().user, { status: 'deactivated' })
    t.ok(res.json().user.deactivated_at)
    const after = await h.call('GET', '/api/v1/organizations/my', { token: temp.access_token })
    t.equal(after.statusCode, 401)
    t.equal((await h.call('POST', `/api/v1/users/${temp.user.id}/deactivate`, { token: carrier.token })).statusCode, 200, 'again: nothing changes')
    const patch = await h.call('PATCH', `/api/v1/users/${temp.user.id}`, { token: carrier.token, body: { name: 'Back' } })
    t.equal(patch.statusCode, 409)
    t.equal(patch.json().code, 'user_deactivated')
    const reuse = await create({ name: 'New Leaving', email: 'leaving@example.com', role: 'driver' })
    t.equal(reuse.statusCode, 201, 'a deactivated user\'s email is free again')
  })

  t.test('another organization sees none of them; a shipper-only organization gets 403', async (t) => {
    for (const [method, url] of [['GET', `/api/v1/users/${driver.user.id}`], ['PATCH', `/api/v1/users/${driver.user.id}`], ['POST', `/api/v1/users/${driver.user.id}/deactivate`]] as const) {
      const res = await h.call(method, url, { token: other.token, body: method === 'PATCH' ? { name: 'x' } : undefined })
      t.equal(res.statusCode, 404, `${method} ${url}`)
    }
    t.equal((await h.call('GET', '/api/v1/users', { token: other.token })).json().meta.total, 0)
    for (const [method, url] of [['GET', '/api/v1/users'], ['POST', '/api/v1/users'], ['GET', `/api/v1/users/${driver.user.id}`]] as const) {
      const res = await h.call(method, url, { token: shipper.token, body: method === 'POST' ? { name: 'x', email: 'x@example.com', role: 'driver' } : undefined })
      t.equal(res.statusCode, 403, `${method} ${url}`)
      t.same(Object.keys(res.json()).sort(), ['code', 'message'])
    }
  })

  t.test('Idempotency-Key: a replay returns the first response, token included, and creates nobody', async (t) => {
    const body = { name: 'Once', email: 'once@example.com', role: 'driver' }
    const a = await h.call('POST', '/api/v1/users', { token: carrier.token, body, headers: { 'idempotency-key': 'user-once' } })
    const b = await h.call('POST', '/api/v1/users', { token: carrier.token, body, headers: { 'idempotency-key': 'user-once' } })
    t.equal(a.statusCode, 201)
    t.same(b.json(), a.json())
    const list = (await h.call('GET', '/api/v1/users?perPage=100', { token: carrier.token })).json()
    t.equal(list.data.filter((u: any) => u.email === 'once@example.com').length, 1)
  })
})
