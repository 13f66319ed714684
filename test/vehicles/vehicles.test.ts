import t from 'tap'
import { build } from '../helpers/build.js'

t.test('vehicles: capacity per dimension, validated, per organization', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const other = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const create = (body: object, token = carrier.token) => h.call('POST', '/api/v1/vehicles', { token, body })

  const vanRes = await create({ name: 'Van 1', plate: 'ab-123-cd', capacity: { grams: 800_000, volume_cm3: 9_000_000, packages: 120 } })
  t.equal(vanRes.statusCode, 201, vanRes.body)
  const van = vanRes.json().vehicle

  t.test('the vehicle as created; a missing dimension is unlimited (null)', async (t) => {
    t.match(van, { name: 'Van 1', plate: 'AB-123-CD', capacity: { grams: 800_000, volume_cm3: 9_000_000, packages: 120 } })
    t.match(van.id, /^veh_/)
    const bike = await create({ name: 'Bike', plate: 'B 1', capacity: { packages: 6 } })
    t.equal(bike.statusCode, 201)
    t.same(bike.json().vehicle.capacity, { grams: null, volume_cm3: null, packages: 6 })
    const none = await create({ name: 'Truck', plate: 'T 1' })
    t.same(none.json().vehicle.capacity, { grams: null, volume_cm3: null, packages: null }, 'no capacity at all: unlimited')
    const got = await h.call('GET', `/api/v1/vehicles/${van.id}`, { token: carrier.token })
    t.equal(got.statusCode, 200)
    t.same(got.json(), van)
    const events = await h.platform.store.readStream(`vehicle-${van.id}`)
    t.same(events.map((e) => e.type), ['VehicleCreated'])
  })

  t.test('422 names every failing field at once, by its dot path', async (t) => {
    const res = await create({ name: '', plate: '', capacity: { grams: -1, volume_cm3: 1.5, packages: 100_001, tonnes: 3 } })
    t.equal(res.statusCode, 422, res.body)
    const errors = res.json().errors
    for (const k of ['name', 'plate', 'capacity.grams', 'capacity.volume_cm3', 'capacity.packages', 'capacity.tonnes']) t.ok(errors[k], `names ${k}`)
    const big = await create({ name: 'Ship', plate: 'S 1', capacity: { grams: 100_000_001, volume_cm3: 1_000_000_001 } })
    t.equal(big.statusCode, 422)
    t.ok(big.json().errors['capacity.grams'])
    t.ok(big.json().errors['capacity.volume_cm3'])
    const dup = await create({ name: 'Van again', plate: 'AB 123.cd' })
    t.equal(dup.statusCode, 422)
    t.ok(dup.json().errors.plate, 'the plate is taken, whatever its spacing, dots, dashes or case')
    t.equal((await create({ name: 'Theirs', plate: 'AB-123-CD' }, other.token)).statusCode, 201, 'another organization may have the same plate')
    const emptyPatch = await h.call('PATCH', `/api/v1/vehicles/${van.id}`, { token: carrier.token, body: {} })
    t.equal(emptyPatch.statusCode, 422)
    const badPatch = await h.call('PATCH', `/api/v1/vehicles/${van.id}`, { token: carrier.token, body: { capacity: { packages: -5 } } })
    t.equal(badPatch.statusCode, 422)
    t.ok(badPatch.json().errors['capacity.packages'])
  })

  t.test('PATCH: a dimension at a time; null makes it unlimited; the plate stays unique', async (t) => {
    const res = await h.call('PATCH', `/api/v1/vehicles/${van.id}`, { token: carrier.token, body: { name: 'Van One', capacity: { grams: null, packages: 100 } } })
    t.equal(res.statusCode, 200, res.body)
    t.match(res.json().vehicle, { name: 'Van One', plate: 'AB-123-CD', capacity: { grams: null, volume_cm3: 9_000_000, packages: 100 } })
    const samePlate = await h.call('PATCH', `/api/v1/vehicles/${van.id}`, { token: carrier.token, body: { plate: 'ab 123 cd' } })
    t.equal(samePlate.statusCode, 200, 'its own plate, respelled, is not taken')
    const taken = await h.call('PATCH', `/api/v1/vehicles/${van.id}`, { token: carrier.token, body: { plate: 'b1' } })
    t.equal(taken.statusCode, 422)
    t.ok(taken.json().errors.plate)
    const events = await h.platform.store.readStream(`vehicle-${van.id}`)
    t.same(events.map((e) => e.type), ['VehicleCreated', 'VehicleUpdated', 'VehicleUpdated'])
    t.equal(events[1]!.metadata.actor.kind, 'organization')
  })

  t.test('listing: paginated, oldest first, the organization\'s own only', async (t) => {
    const list = (await h.call('GET', '/api/v1/vehicles?perPage=2', { token: carrier.token })).json()
    t.equal(list.data.length, 2)
    t.match(list.meta, { total: 3, per_page: 2, current_page: 1, last_page: 2 })
    t.equal(list.data[0].id, van.id)
    const theirs = (await h.call('GET', '/api/v1/vehicles', { token: other.token })).json()
    t.equal(theirs.meta.total, 1)
    t.equal((await h.call('GET', `/api/v1/vehicles/${van.id}`, { token: other.token })).statusCode, 404, 'another organization\'s vehicle is unknown')
    t.equal((await h.call('PATCH', `/api/v1/vehicles/${van.id}`, { token: other.token, body: { name: 'Mine' } })).statusCode, 404)
  })

  t.test('who may call: a shipper-only organization is refused; a dispatcher acts as the organization; a driver is refused', async (t) => {
    for (const [method, url] of [['GET', '/api/v1/vehicles'], ['POST', '/api/v1/vehicles'], ['GET', `/api/v1/vehicles/${van.id}`], ['PATCH', `/api/v1/vehicles/${van.id}`]] as const) {
      const res = await h.call(method, url, { token: shipper.token, body: method === 'GET' ? undefined : { name: 'x', plate: 'X 1' } })
      t.equal(res.statusCode, 403, `${method} ${url}`)
      t.match(res.json(), { code: 'carrier_role_required', message: String })
    }
    const dispatcher = (await h.call('POST', '/api/v1/users', { token: carrier.token, body: { name: 'Sam', email: 'sam@example.com', role: 'dispatcher' } })).json()
    const driver = (await h.call('POST', '/api/v1/users', { token: carrier.token, body: { name: 'Dana', email: 'dana@example.com', role: 'driver' } })).json()
    const made = await create({ name: 'Van 2', plate: 'V 2' }, dispatcher.access_token)
    t.equal(made.statusCode, 201)
    const events = await h.platform.store.readStream(`vehicle-${made.json().vehicle.id}`)
    t.same(events[0]!.metadata.actor, { kind: 'user', id: dispatcher.user.id })
    const refused = await h.call('GET', '/api/v1/vehicles', { token: driver.access_token })
    t.equal(refused.statusCode, 403)
    t.equal(refused.json().code, 'driver_not_allowed')
  })
})
