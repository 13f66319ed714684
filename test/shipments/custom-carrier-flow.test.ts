import t from 'tap'
import { build } from '../helpers/build.js'
import { multipart } from '../carriers/fixtures/multipart.js'

const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }
const PDF = Buffer.from('%PDF-1.4 carrier label')

t.test('a shipment with a custom carrier\'s service type, through both APIs', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier', 'shipper'], carriers_enabled: true })
  const created = await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name: 'Hub', integration: 'custom', visibility: 'private' } })
  t.equal(created.statusCode, 201, created.body)
  const { carrier, api_key } = created.json()
  const st = await h.call('POST', `/api/v1/carriers/${carrier.id}/service-types`, { token: org.token, body: { code: 'express', name: 'Express' } })
  t.equal(st.statusCode, 201, st.body)
  const serviceType = st.json().service_type

  const unknown = await h.call('POST', '/api/v1/shipments', {
    token: org.token, body: { carrier_id: org.id, service_type_code: 'teleport', origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] },
  })
  t.equal(unknown.statusCode, 422)
  t.ok(unknown.json().errors.service_type_code)

  const res = await h.call('POST', '/api/v1/shipments', {
    token: org.token, body: { carrier_id: org.id, service_type_code: 'express', origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] },
  })
  t.equal(res.statusCode, 201, res.body)
  const s = res.json().shipment
  t.same(s.serviceType, { id: serviceType.id, name: 'Express' })
  t.equal(s.status.substatus.code, 'processing', 'custom integration: waits for the carrier\'s label')

  const early = await h.call('POST', `/api/v1/shipments/${s.id}/ready`, { token: org.token })
  t.equal(early.statusCode, 409)
  t.equal(early.json().code, 'shipment_not_documented')
  const notDocumented = await h.call('POST', `/carrier/v1/shipments/${s.id}/status`, { token: api_key, body: { status: 'received' } })
  t.equal(notDocumented.statusCode, 409)

  const m = multipart({ label: PDF })
  const up = await h.app.inject({ method: 'POST', url: `/carrier/v1/shipments/${s.id}/documents`, headers: { authorization: `Bearer ${api_key}`, ...m.headers }, payload: m.payload })
  t.equal(up.statusCode, 200, up.body)
  const mine = (await h.call('GET', `/api/v1/shipments/${s.id}`, { token: org.token })).json()
  t.equal(mine.status.substatus.code, 'pending_preparation')

  const label = await h.call('GET', `/api/v1/shipments/${s.id}/label`, { token: org.token })
  t.equal(label.statusCode, 200)
  t.same(label.rawPayload, PDF, 'the carrier\'s uploaded label is served as is')

  const ready = await h.call('POST', `/api/v1/shipments/${s.id}/ready`, { token: org.token })
  t.equal(ready.statusCode, 200, ready.body)
  t.equal(ready.json().shipment.status.substatus.code, 'ready_to_ship')
  const delivered = await h.call('POST', `/carrier/v1/shipments/${s.id}/status`, { token: api_key, body: { status: 'delivered', message: 'left with the doorman' } })
  t.equal(delivered.statusCode, 200, delivered.body)
  const after = (await h.call('GET', `/api/v1/shipments/${s.id}`, { token: org.token })).json()
  t.equal(after.status.code, 'delivered')
  t.ok(after.delivered_at && after.finished_at && after.shipped_at)
  const tracking = (await h.call('GET', `/api/v1/shipments/${s.id}/tracking`, { token: org.token })).json().tracking
  t.same(tracking.map((i: any) => [i.status.code, i.substatus?.code ?? null]), [
    ['pending', 'processing'], ['pending', 'pending_preparation'], ['pending', 'ready_to_ship'], ['delivered', null],
  ])
  t.equal(tracking[3].message, 'left with the doorman')
  t.equal(tracking[3].source, 'carrier_api')
})
