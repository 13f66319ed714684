import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import t from 'tap'
import {
  createClient, type AddressInput, type CreateShipmentRequest, type PackageInput, type Place, type Shipment, type ProvenEvent, type TrackingItem,
} from '@shipping-platform/client'
import { ADMIN_TOKEN, build } from '../helpers/build.js'

/**
 * The README's shipment session, through the typed client against a listening server: admin
 * creates two organizations and a contract, the shipper saves a place, ships with mixed units,
 * reads the shipment, its label and tracking, cancels it and reads its events. Every name comes
 * from the client's generated types, so a schema change that breaks them fails the type-check.
 */
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
// This file's TypeScript, also when the suite runs its compiled JavaScript (the .ts lies beside it).
const SOURCE = readFileSync(new URL(import.meta.url.replace(/\.js$/, '.ts')), 'utf8')

t.test("the README's client lines are this session's", async (t) => {
  const block = /<!-- readme-client -->\n```ts\n([\s\S]*?)\n```/.exec(README)?.[1]
  t.ok(block, 'the README has a client block')
  const lines = block!.split('\n').filter((line) => line.trim() && !line.startsWith('import '))
  t.equal(lines.length, 5, 'five lines')
  for (const line of lines) t.ok(SOURCE.includes(line.trim()), `runs here: ${line.trim()}`)
})

t.test("the README's shipment session through the typed client", async (t) => {
  const h = await build(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const baseUrl = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`

  const admin = createClient({ baseUrl, token: ADMIN_TOKEN })
  const carrier = await admin.POST('/admin/v1/organizations', {
    body: { name: 'Fast Carrier', subdomain: 'fast', roles: ['carrier'], currency: 'ARS', carriers_enabled: true },
  })
  const shipper = await admin.POST('/admin/v1/organizations', { body: { name: 'Big Shipper', subdomain: 'big', roles: ['shipper'], currency: 'ARS' } })
  t.equal(carrier.response.status, 201)
  const carrierId = carrier.data!.organization.id
  const shipperToken = shipper.data!.access_token
  const contract = await admin.POST('/admin/v1/contracts', { body: { carrier_id: carrierId, shipper_id: shipper.data!.organization.id } })
  t.equal(contract.data?.contract.status, 'active')

  const shipperApi = createClient({ baseUrl, token: shipperToken })
  const saved = await shipperApi.POST('/api/v1/organizations/my/places', {
    body: { name: 'Depot', street: 'Av. Colón', street_number: '1234', city: 'Cordoba', state: 'Córdoba', country: 'AR', phone: '0351 422-1234' },
  })
  const place: Place = saved.data!.place
  t.same(place.city, { id: 1409, name: 'Córdoba' }, 'the city is resolved')
  t.equal(place.phone, '+543514221234', 'the phone is normalised')
  const placeId = place.id

  const destination: AddressInput = { name: 'Ana Gómez', street: 'Av. Santa Fe', street_number: '1860', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const packages: PackageInput[] = [
    { original_weight: 2.5, weight_unit: 'KG', original_length: 12, length_unit: 'inches', width: 20, height: 15 },
    { grams: 800, length: 10, width: 10, height: 10, original_temperature_max: 46, temperature_max_unit: 'F' },
  ]

  // The README's five lines (the fifth, the cancellation, after the label's checks).
  const api = createClient({ baseUrl, token: shipperToken })
  const { data: created } = await api.POST('/api/v1/shipments', { body: { carrier_id: carrierId, origin: { place_id: placeId }, destination, packages } })
  const shipment: Shipment = (await api.GET('/api/v1/shipments/{id}', { params: { path: { id: created!.shipment.id } } })).data!
  const label = await api.GET('/api/v1/shipments/{id}/label', { params: { path: { id: shipment.id } }, parseAs: 'arrayBuffer' })

  t.equal(created?.success, true)
  t.equal(shipment.status.code, 'pending')
  t.same(shipment.packages[0]!.weight, { value: 2500, original_value: 2.5, unit: 'kg' }, 'KG normalised to grams, the original kept')
  t.same(shipment.packages[0]!.length, { value: 31, original_value: 12, unit: 'in' }, 'inches to whole centimetres, rounded up')
  t.equal(shipment.packages[1]!.temperature_max?.unit, 'fahrenheit')
  t.equal(label.response.headers.get('content-type'), 'application/pdf')
  t.equal(Buffer.from(label.data as ArrayBuffer).subarray(0, 5).toString(), '%PDF-', 'the label is a PDF')
  const zpl = await api.GET('/api/v1/shipments/{id}/label', { params: { path: { id: shipment.id }, query: { format: 'zpl' } }, parseAs: 'text' })
  t.match(zpl.data, /^\^XA[\s\S]*\^XZ\s*$/, 'the same label as ZPL')

  const tracking = await api.GET('/api/v1/shipments/{id}/tracking', { params: { path: { id: shipment.id } } })
  const first: TrackingItem | undefined = tracking.data?.tracking[0]
  t.equal(first?.status.code, 'pending')

  const { data: cancelled } = await api.POST('/api/v1/shipments/{id}/cancel', { params: { path: { id: shipment.id } }, body: { reason: 'changed plans' } })
  t.equal(cancelled?.shipment.status.code, 'cancelled')

  const events = await api.GET('/api/v1/shipments/{id}/events', { params: { path: { id: shipment.id } } })
  const types = events.data!.events.map((e: ProvenEvent) => e.type)
  t.same(types, ['ShipmentCreated', 'LabelPrinted', 'ShipmentCancelled'])

  // A refusal is typed too: a 422 names every failing field by its dot path.
  const bad: CreateShipmentRequest = { carrier_id: carrierId, origin: { place_id: placeId }, destination, packages: [{ grams: 800 }] }
  const refused = await api.POST('/api/v1/shipments', { body: bad })
  t.equal(refused.response.status, 422)
  t.same(Object.keys(refused.error && 'errors' in refused.error ? refused.error.errors : {}).sort(), ['packages.0.height', 'packages.0.length', 'packages.0.width'])
  const other = await createClient({ baseUrl, token: 'sk_wrong' }).GET('/api/v1/shipments/{id}', { params: { path: { id: shipment.id } } })
  t.equal(other.response.status, 401)
  t.equal(other.error && 'code' in other.error ? other.error.code : undefined, 'unauthenticated')
})
