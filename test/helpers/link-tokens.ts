import type { TestApp } from './build.js'

/** A published route's live-link token and a public shipment's tracking token: the two secrets that appear in paths. */
export async function linkTokens(h: TestApp, w: { route(o: { tasks: string[]; publish: boolean }): Promise<number | string>; carrier: { id: string; token: string }; shipper: { token: string } }): Promise<{ live: string; track: string }> {
  const route = await w.route({ tasks: [], publish: true })
  const live = new URL((await h.call('POST', `/api/v1/routes/${route}/live-links`, { token: w.carrier.token, body: {} })).json().url).pathname.split('/').pop()!
  const address = { name: 'A', street: 'S', street_number: '1', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const shipment = (await h.call('POST', '/api/v1/shipments', { token: w.shipper.token, body: { carrier_id: w.carrier.id, is_public: true, origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] } })).json().shipment
  return { live, track: new URL(shipment.public_tracking_url).pathname.split('/').pop()! }
}
