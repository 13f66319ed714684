import t from 'tap'
import { build } from '../helpers/build.js'
import { createPlatform } from '../../src/platform.js'
import { buildApp } from '../../src/http/app.js'
import { modules } from '../../src/modules.js'
import { changedKeys, decodeChangeNotice, READ_MODEL_CHANGED_CHANNEL } from '../../projections/change-notices.js'
import { SHIPMENT_ROWS } from '../../projections/shipments/shipments-projection.js'

const address = (over: Record<string, unknown> = {}) => ({
  name: 'Ana Gómez', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR', ...over,
})

/** GET /shipments/{id} is answered from a per-process cache (src/shipments/view-cache.ts): never stale after a write. */
t.test('the cached shipment view follows every write', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const stranger = await h.createOrganization({ roles: ['carrier', 'shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const createShipment = async () => {
    const res = await h.call('POST', '/api/v1/shipments', {
      token: shipper.token,
      body: { carrier_id: carrier.id, origin: address(), destination: address({ name: 'Bob', city: 'Rosario', state: 'Santa Fe' }), packages: [{ grams: 500, length: 10, width: 10, height: 10 }] },
    })
    t.equal(res.statusCode, 201, res.body)
    return res.json().shipment.id as number
  }
  const get = (id: number, token = shipper.token) => h.call('GET', `/api/v1/shipments/${id}`, { token })

  t.test('a hit answers the same bytes, content type included; another tenant still gets 404', async (t) => {
    const id = await createShipment()
    const first = await get(id)
    const second = await get(id)
    t.equal(first.statusCode, 200)
    t.equal(second.body, first.body)
    t.equal(second.headers['content-type'], first.headers['content-type'])
    t.match(second.headers['content-type'], /^application\/json/)
    t.equal((await get(id, stranger.token)).statusCode, 404)
    t.equal((await get(id, stranger.token)).statusCode, 404)
    const asCarrier = await get(id, carrier.token)
    t.equal(asCarrier.statusCode, 200)
    t.equal(asCarrier.json().id, id)
  })

  t.test('after a status change through the API the next GET shows it (same process)', async (t) => {
    for (let i = 0; i < 5; i++) {
      const id = await createShipment()
      t.equal((await get(id)).json().status.code, 'pending')
      t.equal((await get(id, carrier.token)).json().status.code, 'pending')
      const cancel = await h.call('POST', `/api/v1/shipments/${id}/cancel`, { token: shipper.token, body: { reason: 'changed mind' } })
      t.equal(cancel.statusCode, 200, cancel.body)
      t.equal((await get(id)).json().status.code, 'cancelled', 'the writer sees it')
      t.equal((await get(id, carrier.token)).json().status.code, 'cancelled', 'the other viewer too')
    }
  })

  t.test('a status catalog change shows in the next GET of its organization only', async (t) => {
    const id = await createShipment()
    t.equal((await get(id)).json().status.name, 'Pending')
    t.equal((await get(id, carrier.token)).json().status.name, 'Pending')
    const patch = await h.call('PATCH', '/api/v1/shipment-statuses/pending', { token: shipper.token, body: { name: 'Esperando' } })
    t.equal(patch.statusCode, 200, patch.body)
    t.equal((await get(id)).json().status.name, 'Esperando')
    t.equal((await get(id, carrier.token)).json().status.name, 'Pending')
  })

  t.test('the projection NOTIFYs the changed shipment ids at commit', async (t) => {
    const names = (payload: string, id: number) => { const ids = changedKeys(decodeChangeNotice(payload), SHIPMENT_ROWS); return ids !== 'all' && ids.includes(id) }
    const id = await createShipment()
    const notices: string[] = []
    const unlisten = await h.platform.database.listen(READ_MODEL_CHANGED_CHANNEL, (p) => notices.push(p))
    t.teardown(unlisten)
    await h.call('POST', `/api/v1/shipments/${id}/cancel`, { token: shipper.token, body: {} })
    const deadline = Date.now() + 2_000
    while (!notices.some((n) => names(n, id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
    t.ok(notices.some((n) => names(n, id)), `a notice names ${id}: ${notices.join(' ; ')}`)
  })

  t.test('a write through another process on the same database is seen within a short bounded wait', async (t) => {
    const second = await createPlatform(h.platform.config, { database: h.platform.database })
    const app2 = await buildApp(second, { logger: false, modules })
    t.teardown(async () => { await app2.close(); await second.close() })
    const id = await createShipment()
    t.equal((await get(id)).json().status.code, 'pending')
    t.equal((await get(id)).json().status.code, 'pending', 'cached here')
    const cancel = await app2.inject({ method: 'POST', url: `/api/v1/shipments/${id}/cancel`, headers: { authorization: `Bearer ${shipper.token}` }, payload: {} })
    t.equal(cancel.statusCode, 200, cancel.body)
    const started = Date.now()
    let status = ''
    while (Date.now() - started < 2_000) {
      status = (await get(id)).json().status.code
      if (status === 'cancelled') break
      await new Promise((r) => setTimeout(r, 5))
    }
    t.equal(status, 'cancelled', `seen after ${Date.now() - started} ms`)
  })
})
