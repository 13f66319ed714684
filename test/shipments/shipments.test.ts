import t from 'tap'
import { build } from '../helpers/build.js'

const newAddress = (over: Record<string, unknown> = {}) => ({
  name: 'Ana Gómez', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR',
  zipcode: '5000', phone: '0351 422-1234', email: 'ana@example.com', ...over,
})

t.test('shipments in the routes API, end to end', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ name: 'Fast Carrier', roles: ['carrier'], currency: 'ARS' })
  const shipper = await h.createOrganization({ name: 'Big Shipper', roles: ['shipper'], currency: 'ARS' })
  const stranger = await h.createOrganization({ name: 'Stranger', roles: ['carrier', 'shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const placeRes = await h.call('POST', '/api/v1/organizations/my/places', {
    token: shipper.token,
    body: { name: 'Warehouse', street: 'Ruta 9', street_number: 'km 5', city: 'Córdoba', state: 'Córdoba', country: 'AR' },
  })
  t.equal(placeRes.statusCode, 201, placeRes.body)
  const place = placeRes.json().place

  const create = (body: Record<string, unknown>, token = shipper.token) => h.call('POST', '/api/v1/shipments', { token, body })

  let shipment: any
  t.test('a shipper creates a shipment from a place to a new address with mixed units', async (t) => {
    const res = await create({
      carrier_id: carrier.id,
      external_reference: 'ORDER-1',
      origin: { place_id: place.id },
      destination: newAddress({ city: 'Villa Inventada del Norte' }),
      packages: [
        { original_weight: 2.5, weight_unit: 'KG', original_length: 10, length_unit: 'inches', width: 20, height: 15, label_code: 'PKG-1' },
        { grams: 300, length: 10, width: 10, height: 10, original_temperature_min: 35.6, temperature_min_unit: '°F', temperature_max: 8, declared_value_amount: 100 },
      ],
    })
    t.equal(res.statusCode, 201, res.body)
    const body = res.json()
    t.equal(body.success, true)
    shipment = body.shipment
    t.same(Object.keys(shipment).sort(), [
      'carrier', 'control_number', 'created_at', 'declared_value', 'declared_value_currency', 'delivered_at', 'destination',
      'external_reference', 'finished_at', 'id', 'is_public', 'label_printed_at', 'merchant', 'origin', 'packages',
      'promised_delivery_at', 'public_tracking_url', 'related_shipment_id', 'related_type', 'requires_pickup', 'serviceType', 'shipped_at', 'shipper',
      'status', 'totals', 'tracking_number', 'tracking_url', 'ulid', 'updated_at',
    ].sort())
    t.ok(Number.isInteger(shipment.id))
    t.equal(shipment.public_tracking_url, null, 'not public: no tracking link')
    t.match(shipment.control_number, /^[23456789ABCDEFGHJKMNPQRSTWXYZ]{5}$/)
    t.equal(shipment.status.code, 'pending')
    t.equal(shipment.status.substatus.code, 'pending_preparation', 'service_routes flow: the platform makes the label')
    t.match(shipment.status.color, /^#[0-9A-F]{6}$/)
    t.same(shipment.shipper, { id: shipper.internalId, name: 'Big Shipper', subdomain: shipper.organization.subdomain })
    t.same(shipment.carrier, { id: carrier.internalId, name: 'Fast Carrier', subdomain: carrier.organization.subdomain })
    t.equal(shipment.origin.name, 'Warehouse')
    t.equal(shipment.origin.city.name, 'Córdoba')
    t.equal(shipment.destination.city.name, 'Villa Inventada del Norte', 'an unknown town is recorded as a new city')
    t.equal(shipment.destination.phone, '+543514221234')
    t.ok(shipment.destination.geo_latitude < -30, 'geocoded to the state centre')
    const [p1, p2] = shipment.packages
    t.same(p1.weight, { value: 2500, original_value: 2.5, unit: 'kg' })
    t.equal(p1.grams, 2500)
    t.same(p1.length, { value: 26, original_value: 10, unit: 'in' })
    t.same(p1.width, { value: 20, original_value: null, unit: 'cm' })
    t.equal(p1.label_code, 'PKG-1')
    t.same(p2.temperature_min, { value: 2, original_value: 35.6, unit: 'fahrenheit' })
    t.same(p2.temperature_max, { value: 8, original_value: null, unit: 'celsius' })
    t.equal(p2.declared_value_currency, 'ARS')
    t.equal(p2.label_code, `${shipment.control_number}002`)
    t.same(shipment.totals, { total_packages: 2, total_grams: 2800, total_cm3: 26 * 20 * 15 + 1000 })
    t.equal(shipment.declared_value, 100, 'defaults to the sum of the packages')
  })

  t.test('GET /shipments/{id}: shipper and carrier read it, anyone else gets 404', async (t) => {
    const mine = await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: shipper.token })
    t.equal(mine.statusCode, 200)
    t.same(mine.json(), shipment)
    t.equal((await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: carrier.token })).statusCode, 200)
    const other = await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: stranger.token })
    t.equal(other.statusCode, 404)
    t.equal(other.json().code, 'not_found')
    t.equal((await h.call('GET', '/api/v1/shipments/999999', { token: shipper.token })).statusCode, 404)
    for (const [method, path] of [['POST', 'cancel'], ['POST', 'ready'], ['GET', 'tracking'], ['GET', 'label'], ['GET', 'attachments'], ['GET', 'events']]) {
      const res = await h.call(method!, `/api/v1/shipments/${shipment.id}/${path}`, { token: stranger.token })
      t.equal(res.statusCode, 404, `${method} ${path} by another tenant`)
    }
    const bulk = await h.call('POST', '/api/v1/shipments/tracking/bulk', { token: stranger.token, body: { shipment_ids: [shipment.id] } })
    t.same(bulk.json().tracking, [], 'bulk tracking leaves out what the caller cannot see')
  })

  t.test('a carrier creates one for its shipper; reuse of address and package by id', async (t) => {
    const res = await create({
      shipper_id: shipper.id,
      origin: { id: shipment.destination.id },
      destination: newAddress({ name: 'Beto' }),
      packages: [{ id: shipment.packages[0].id }],
    }, carrier.token)
    // The address belongs to the shipper, not to the carrier: 422.
    t.equal(res.statusCode, 422, res.body)
    t.ok(res.json().errors['origin.id'])
    const ok = await create({
      carrier_id: carrier.id,
      origin: { id: shipment.destination.id },
      destination: newAddress({ name: 'Beto' }),
      packages: [{ id: shipment.packages[0].id }],
    })
    t.equal(ok.statusCode, 201, ok.body)
    const s = ok.json().shipment
    t.equal(s.origin.id, shipment.destination.id)
    t.equal(s.origin.name, shipment.destination.name)
    t.same(s.packages[0], shipment.packages[0])
    const twice = await create({ carrier_id: carrier.id, origin: newAddress(), destination: newAddress(), packages: [{ id: shipment.packages[0].id }, { id: shipment.packages[0].id }] })
    t.equal(twice.statusCode, 422)
    t.ok(twice.json().errors['packages.1.id'], 'a package reused twice in one shipment')
    const byCarrier = await create({ shipper_id: shipper.id, origin: newAddress(), destination: newAddress(), packages: [{ grams: 1, length: 1, width: 1, height: 1 }] }, carrier.token)
    t.equal(byCarrier.statusCode, 201, byCarrier.body)
    t.equal(byCarrier.json().shipment.shipper.id, shipper.internalId)
  })

  t.test('Idempotency-Key: the same key and body create one shipment', async (t) => {
    const body = { carrier_id: carrier.id, origin: newAddress(), destination: newAddress(), packages: [{ grams: 5, length: 1, width: 1, height: 1 }] }
    const headers = { 'idempotency-key': 'create-once-1' }
    const first = await h.call('POST', '/api/v1/shipments', { token: shipper.token, body, headers })
    const again = await h.call('POST', '/api/v1/shipments', { token: shipper.token, body, headers })
    t.equal(first.statusCode, 201, first.body)
    t.equal(again.statusCode, 201)
    t.equal(again.json().shipment.id, first.json().shipment.id)
    const other = await h.call('POST', '/api/v1/shipments', { token: shipper.token, body: { ...body, external_reference: 'x' }, headers })
    t.equal(other.statusCode, 422)
    t.ok(other.json().errors.idempotency_key)
    const n = await h.platform.rm.selectFrom('shipments').select((eb) => eb.fn.countAll<number>().as('n')).where('id', '>=', first.json().shipment.id).executeTakeFirst()
    t.equal(Number(n?.n), 1, 'one shipment')
  })

  t.test('no contract → 422 on the counterpart field', async (t) => {
    const res = await create({ carrier_id: stranger.id, origin: newAddress(), destination: newAddress(), packages: [{ grams: 1, length: 1, width: 1, height: 1 }] })
    t.equal(res.statusCode, 422)
    t.match(res.json().errors.carrier_id[0], /contract/)
    const missing = await create({ origin: newAddress(), destination: newAddress(), packages: [{ grams: 1, length: 1, width: 1, height: 1 }] })
    t.ok(missing.json().errors.carrier_id)
  })

  t.test('label: generated PDF, ZPL, label_printed_at set on first retrieval', async (t) => {
    const pdf = await h.call('GET', `/api/v1/shipments/${shipment.id}/label`, { token: shipper.token })
    t.equal(pdf.statusCode, 200, pdf.body.slice(0, 200))
    t.equal(pdf.headers['content-type'], 'application/pdf')
    t.equal(pdf.rawPayload.subarray(0, 5).toString(), '%PDF-')
    const zpl = await h.call('GET', `/api/v1/shipments/${shipment.id}/label?format=zpl`, { token: shipper.token })
    t.equal(zpl.statusCode, 200)
    t.match(zpl.body, /\^XA/)
    const after = (await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: shipper.token })).json()
    t.ok(after.label_printed_at)
    const events = (await h.call('GET', `/api/v1/shipments/${shipment.id}/events`, { token: shipper.token })).json().events
    t.equal(events.filter((e: any) => e.type === 'LabelPrinted').length, 1, 'only the first retrieval is recorded')
  })

  t.test('ready, tracking, cancel rules', async (t) => {
    const ready = await h.call('POST', `/api/v1/shipments/${shipment.id}/ready`, { token: shipper.token })
    t.equal(ready.statusCode, 200, ready.body)
    t.equal(ready.json().shipment.status.substatus.code, 'ready_to_ship')
    const tracking = await h.call('GET', `/api/v1/shipments/${shipment.id}/tracking`, { token: shipper.token })
    t.equal(tracking.statusCode, 200)
    t.same(tracking.json().tracking.map((i: any) => i.substatus?.code), ['pending_preparation', 'ready_to_ship'])
    t.equal(tracking.json().tracking[0].source, 'routes_api')
    const cancel = await h.call('POST', `/api/v1/shipments/${shipment.id}/cancel`, { token: shipper.token, body: { reason: 'customer changed mind' } })
    t.equal(cancel.statusCode, 200, cancel.body)
    t.equal(cancel.json().shipment.status.code, 'cancelled')
    t.ok(cancel.json().shipment.finished_at)
    const again = await h.call('POST', `/api/v1/shipments/${shipment.id}/cancel`, { token: shipper.token })
    t.equal(again.statusCode, 409)
    t.match(again.json().message, /cancelled/)
    const bulk = await h.call('POST', '/api/v1/shipments/tracking/bulk', { token: shipper.token, body: { shipment_ids: [shipment.id, 999999] } })
    t.equal(bulk.statusCode, 200)
    t.same(bulk.json().tracking.map((x: any) => x.shipment_id), [shipment.id])
    t.same(bulk.json().tracking[0].tracking.map((i: any) => i.status.code), ['pending', 'pending', 'cancelled'])
    const tooMany = await h.call('POST', '/api/v1/shipments/tracking/bulk', { token: shipper.token, body: { shipment_ids: Array.from({ length: 101 }, (_, i) => i + 1) } })
    t.equal(tooMany.statusCode, 422)
    t.ok(tooMany.json().errors.shipment_ids)
  })

  t.test('audit and time travel from the event log', async (t) => {
    const events = (await h.call('GET', `/api/v1/shipments/${shipment.id}/events`, { token: shipper.token })).json().events
    t.same(events.map((e: any) => e.type), ['ShipmentCreated', 'LabelPrinted', 'ShipmentReady', 'ShipmentCancelled'])
    t.equal((await h.call('GET', `/api/v1/shipments/${shipment.id}/events`, { token: stranger.token })).statusCode, 404)
    const beforeCancel = events[2].recorded_at
    const past = await h.call('GET', `/api/v1/shipments/${shipment.id}?as_of=${encodeURIComponent(beforeCancel)}`, { token: shipper.token })
    t.equal(past.statusCode, 200, past.body)
    t.equal(past.json().status.code, 'pending')
    t.equal(past.json().status.substatus.code, 'ready_to_ship')
    const now = (await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: shipper.token })).json()
    t.equal(now.status.code, 'cancelled')
    const early = await h.call('GET', `/api/v1/shipments/${shipment.id}?as_of=2000-01-01T00:00:00Z`, { token: shipper.token })
    t.equal(early.statusCode, 404, 'did not exist yet')
  })

  t.test('listing: pagination, filters, tenant isolation', async (t) => {
    const all = await h.call('GET', '/api/v1/shipments?perPage=2', { token: shipper.token })
    t.equal(all.statusCode, 200, all.body)
    const page = all.json().shipments
    t.equal(page.meta.total, 4)
    t.equal(page.data.length, 2)
    t.match(page.links.next, /page=2/)
    const cancelled = (await h.call('GET', '/api/v1/shipments?status=cancelled', { token: shipper.token })).json().shipments
    t.same(cancelled.data.map((s: any) => s.id), [shipment.id])
    const byRef = (await h.call('GET', '/api/v1/shipments?external_reference=ORDER-1', { token: carrier.token })).json().shipments
    t.same(byRef.data.map((s: any) => s.id), [shipment.id])
    const future = (await h.call('GET', '/api/v1/shipments?created_from=2999-01-01T00:00:00Z', { token: shipper.token })).json().shipments
    t.equal(future.meta.total, 0)
    t.equal((await h.call('GET', '/api/v1/shipments', { token: stranger.token })).json().shipments.meta.total, 0)
    t.equal((await h.call('GET', '/api/v1/shipments?status=flying', { token: shipper.token })).statusCode, 422)
  })

  t.test('attachments: upload, list, download, isolation', async (t) => {
    const boundary = '----x'
    const payload = [
      `--${boundary}`, 'Content-Disposition: form-data; name="description"', '', 'Invoice',
      `--${boundary}`, 'Content-Disposition: form-data; name="file"; filename="invoice.txt"', 'Content-Type: text/plain', '', 'hello attachment',
      `--${boundary}--`, '',
    ].join('\r\n')
    const up = await h.app.inject({
      method: 'POST', url: `/api/v1/shipments/${shipment.id}/attachments`, payload,
      headers: { authorization: `Bearer ${carrier.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    })
    t.equal(up.statusCode, 201, up.body)
    const att = up.json().attachment
    t.match(att.id, /^att_/)
    t.equal(att.size, 16)
    t.equal(att.description, 'Invoice')
    const list = await h.call('GET', `/api/v1/shipments/${shipment.id}/attachments`, { token: shipper.token })
    t.same(list.json().attachments.map((a: any) => a.id), [att.id])
    const dl = await h.call('GET', `/api/v1/shipments/${shipment.id}/attachments/${att.id}`, { token: shipper.token })
    t.equal(dl.statusCode, 200)
    t.equal(dl.body, 'hello attachment')
    t.equal((await h.call('GET', `/api/v1/shipments/${shipment.id}/attachments/${att.id}`, { token: stranger.token })).statusCode, 404)
    const empty = await h.app.inject({
      method: 'POST', url: `/api/v1/shipments/${shipment.id}/attachments`,
      payload: [`--${boundary}`, 'Content-Disposition: form-data; name="description"', '', 'x', `--${boundary}--`, ''].join('\r\n'),
      headers: { authorization: `Bearer ${carrier.token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    })
    t.equal(empty.statusCode, 422)
    t.ok(empty.json().errors.file)
  })

  t.test('status catalog: defaults, rename and recolour per organization', async (t) => {
    const cat = (await h.call('GET', '/api/v1/shipment-statuses', { token: shipper.token })).json().statuses
    t.same(cat.map((s: any) => s.code), ['pending', 'shipped', 'picked_up', 'in_facility', 'out_for_delivery', 'attempted_delivery', 'delivered', 'not_delivered', 'cancelled', 'returned'])
    t.same(cat[0].substatuses.map((s: any) => s.code), ['processing', 'pending_preparation', 'ready_to_ship'])
    const patch = await h.call('PATCH', '/api/v1/shipment-statuses/cancelled', { token: shipper.token, body: { name: 'Anulado', color: '#123abc' } })
    t.equal(patch.statusCode, 200, patch.body)
    const mine = (await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: shipper.token })).json()
    t.same([mine.status.name, mine.status.color], ['Anulado', '#123ABC'])
    const theirs = (await h.call('GET', `/api/v1/shipments/${shipment.id}`, { token: carrier.token })).json()
    t.equal(theirs.status.name, 'Cancelled', 'the carrier keeps its own catalog')
    const bad = await h.call('PATCH', '/api/v1/shipment-statuses/cancelled', { token: shipper.token, body: { color: 'red' } })
    t.equal(bad.statusCode, 422)
    t.ok(bad.json().errors.color)
    t.equal((await h.call('PATCH', '/api/v1/shipment-statuses/flying', { token: shipper.token, body: { name: 'x' } })).statusCode, 404)
  })
})
