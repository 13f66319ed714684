import type { TestApp } from '../helpers/build.js'
import { addressAt, etaWorld, north, until } from '../etas/fixtures.js'

export { north, until }

/** Things the tracking page must never show: the recipient, its phone, another stop's address. */
export const RECIPIENT = '<img src=x onerror=alert(1)> Rita Recipiente'
export const PHONE = '+54 341 555 0199'
export const OTHER_STREET = 'Pasaje Ajeno'

/**
 * A public shipment of the ETA world's carrier (a service_routes organization, so the background's
 * workflow makes its delivery task), its tracking token, and a started route where another stop
 * (`before`) comes first and one more (`after`) follows.
 */
export async function trackingWorld(h: TestApp, opts: { natsUrl?: string | undefined } = {}) {
  const w = await etaWorld(h, opts)
  const created = await h.call('POST', '/api/v1/shipments', {
    token: w.shipper.token,
    body: {
      carrier_id: w.carrier.id, is_public: true, promised_delivery_at: new Date(Date.now() + 2 * 86400_000).toISOString(),
      origin: addressAt(north(0), { name: 'Depósito Central' }),
      destination: addressAt(north(4), { name: RECIPIENT, phone: PHONE, street: 'Bv. Oroño', street_number: '1500' }),
      packages: [{ grams: 800, length: 10, width: 10, height: 10 }],
    },
  })
  if (created.statusCode !== 201) throw new Error(`shipment: ${created.body}`)
  const shipment = created.json().shipment
  const url = new URL(shipment.public_tracking_url)
  const token = url.pathname.split('/').pop()!
  let delivery = ''
  await until(async () => {
    const list = (await w.api('GET', `/tasks?shipment_id=${shipment.id}`)).json()
    delivery = list.data?.find((x: any) => x.type === 'delivery')?.ulid ?? ''
    return delivery !== ''
  }, 15_000, 'the shipment\'s delivery task')
  const before = await w.taskAt(2, { address: addressAt(north(2), { name: 'Vecino Ajeno', phone: '+54 341 555 0777', street: OTHER_STREET, street_number: '77' }) })
  const after = await w.taskAt(6)
  return { ...w, privateShipment: w.shipment, shipment, token, path: url.pathname, delivery, before, after }
}

/** Every key of a JSON value, at any depth. */
export function keysOf(v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) v.forEach((x) => keysOf(x, out))
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) { out.add(k); keysOf(x, out) }
  return out
}
