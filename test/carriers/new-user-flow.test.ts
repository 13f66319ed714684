import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { build } from '../helpers/build.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { closeIdleConnections } from '../../src/notifications/safe-http.js'
import { sampleRates } from '../tariffs/fixtures/sample-rates.js'
import { startReceiver, until } from '../notifications/fixtures/receiver.js'
import { multipart } from './fixtures/multipart.js'

t.teardown(() => closeIdleConnections())

// Issue 5 "Done means", as a new user would: hub carrier, certification, tariff, a shipper's
// quote and shipment, a signed `new`, label, statuses to delivered, reconciliation by updated_since.
t.test('a carrier and a shipper, end to end', async (t) => {
  const h = await build(t)
  // The API process' background: bus, relay, and the notifier's consumer and dispatcher.
  const background = await startBackground(h.platform, silentLogger)
  t.teardown(() => background.stop())
  const rx = await startReceiver(t)

  const carrierOrg = await h.createOrganization({ name: 'Andes Express', roles: ['carrier'], carriers_enabled: true })
  const shipper = await h.createOrganization({ name: 'Tienda', roles: ['shipper'] })
  await h.signContract(carrierOrg.id, shipper.id)

  const made = await h.call('POST', '/api/v1/carriers', { token: carrierOrg.token, body: { name: 'Andes Parcel', integration: 'custom', visibility: 'public', access_mode: 'contract', notification_url: rx.url } })
  t.equal(made.statusCode, 201, made.body)
  const { carrier, api_key: key, hmac_secret: secret } = made.json()
  t.equal((await h.admin('POST', `/carriers/${carrier.id}/certification`, { status: 'certified' })).statusCode, 200)
  t.equal((await h.call('GET', '/carrier/v1/me', { token: key })).json().carrier.certification_status, 'certified')

  const tariff = (await h.call('POST', '/carrier/v1/tariffs', { token: key, body: { name: 'Standard 2026', currency: 'ARS', service_type: { code: 'std', name: 'Standard' } } })).json().tariff
  t.equal((await h.call('PUT', `/carrier/v1/tariffs/${tariff.id}/rates`, { token: key, body: sampleRates })).statusCode, 200)
  t.equal((await h.call('POST', `/carrier/v1/tariffs/${tariff.id}/activate`, { token: key })).statusCode, 200)

  const origin = { name: 'Depósito', street: 'Calle 7', street_number: '100', city: 'La Plata', state: 'Buenos Aires', country: 'AR' }
  const destination = { name: 'Ana', street: 'Balcarce', street_number: '9', city: 'Salta', state: 'Salta', country: 'AR' }
  const packages = [{ grams: 700, length: 20, width: 15, height: 10 }]
  const quotes = await h.call('POST', '/api/v1/shipments/quotes', { token: shipper.token, body: { origin, destination, packages, carrier_id: carrierOrg.id } })
  t.equal(quotes.statusCode, 200, quotes.body)
  t.same(quotes.json().quotes, [{ service_type_id: tariff.service_type.id, service_type_name: 'Standard', price: 10, currency: 'ARS', estimated_delivery_days: 3 }])

  const created = await h.call('POST', '/api/v1/shipments', { token: shipper.token, body: { carrier_id: carrierOrg.id, service_type_id: tariff.service_type.id, origin, destination, packages } })
  t.equal(created.statusCode, 201, created.body)
  const shipmentId = created.json().shipment.id

  await until(() => rx.received.some((r) => JSON.parse(r.body).shipment_id === shipmentId), 5000, 'the new webhook')
  const hook = rx.received.find((r) => JSON.parse(r.body).shipment_id === shipmentId)!
  const notice = new Webhook(secret).verify(hook.body, hook.headers) as any
  t.match(notice, { event: 'new', shipment_id: shipmentId, carrier_id: carrier.id })

  const detail = (await h.call('GET', `/carrier/v1/shipments/${shipmentId}`, { token: key })).json()
  t.match(detail.custom_data.quote, { price: 10, currency: 'ARS', source: 'tariff', tariff_id: tariff.id })
  t.equal(detail.carrier_state, 'processing')

  const m = multipart({ label: Buffer.from('%PDF-1.4 label') })
  const up = await h.app.inject({ method: 'POST', url: `/carrier/v1/shipments/${shipmentId}/documents`, headers: { authorization: `Bearer ${key}`, ...m.headers }, payload: m.payload })
  t.equal(up.statusCode, 200, up.body)
  t.equal((await h.call('POST', `/api/v1/shipments/${shipmentId}/ready`, { token: shipper.token })).statusCode, 200)
  await until(() => rx.received.some((r) => JSON.parse(r.body).shipment_id === shipmentId && JSON.parse(r.body).event === 'ready_to_ship'), 5000, 'ready_to_ship')

  t.equal((await h.call('PUT', `/carrier/v1/shipments/${shipmentId}/tracking`, { token: key, body: { tracking_number: 'AP-1', tracking_url: 'https://andes.example/t/AP-1' } })).statusCode, 200)
  for (const status of ['received', 'out_for_delivery', 'delivered']) {
    const res = await h.call('POST', `/carrier/v1/shipments/${shipmentId}/status`, { token: key, body: { status } })
    t.equal(res.statusCode, 200, `${status}: ${res.body}`)
  }
  const seen = (await h.call('GET', `/api/v1/shipments/${shipmentId}`, { token: shipper.token })).json()
  t.equal(seen.status.code, 'delivered', 'the shipper sees delivered')
  const tracking = (await h.call('GET', `/api/v1/shipments/${shipmentId}/tracking`, { token: shipper.token })).json()
  t.ok(tracking.tracking.length >= 3, 'every report is in the tracking history')

  const feed = (await h.call('GET', '/carrier/v1/shipments?updated_since=2000-01-01T00:00:00Z', { token: key })).json()
  t.same(feed.data.map((s: any) => [s.id, s.status.code]), [[shipmentId, 'delivered']], 'reconciliation by updated_since')
  const again = (await h.call('GET', `/carrier/v1/shipments?cursor=${feed.meta.next_cursor}`, { token: key })).json()
  t.same(again.data, [], 'caught up')
})
