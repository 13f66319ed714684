import type { TestApp } from '../helpers/build.js'

export const newAddress = (over: Record<string, unknown> = {}) => ({
  name: 'Ana Gómez', street: 'San Martín', street_number: '50', city: 'Rosario', state: 'Santa Fe', country: 'AR', ...over,
})

/**
 * A carrier organization with a contracted shipper, a shipment it carries (two packages with known
 * label codes), a saved place, a driver and a dispatcher; and helpers to call the tasks API.
 */
export async function tasksWorld(h: TestApp) {
  const carrier = await h.createOrganization({ roles: ['carrier'], currency: 'ARS' })
  const shipper = await h.createOrganization({ roles: ['shipper'], currency: 'ARS' })
  await h.signContract(carrier.id, shipper.id)
  const shipmentRes = await h.call('POST', '/api/v1/shipments', {
    token: shipper.token,
    body: {
      carrier_id: carrier.id, origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress(),
      packages: [{ grams: 1500, length: 10, width: 20, height: 30, label_code: 'PKG-A' }, { grams: 500, length: 10, width: 10, height: 10, label_code: 'PKG-B' }],
    },
  })
  if (shipmentRes.statusCode !== 201) throw new Error(`shipment: ${shipmentRes.body}`)
  const shipment = shipmentRes.json().shipment
  const placeRes = await h.call('POST', '/api/v1/organizations/my/places', {
    token: carrier.token, body: { name: 'Depot', street: 'Ruta 9', street_number: 'km 5', city: 'Córdoba', state: 'Córdoba', country: 'AR' },
  })
  if (placeRes.statusCode !== 201) throw new Error(`place: ${placeRes.body}`)
  const user = async (role: 'driver' | 'dispatcher', name: string) => {
    const res = await h.call('POST', '/api/v1/users', { token: carrier.token, body: { name, email: `${name.toLowerCase().replace(/\W/g, '')}-${Math.random().toString(36).slice(2, 7)}@example.com`, role } })
    if (res.statusCode !== 201) throw new Error(`user: ${res.body}`)
    const b = res.json()
    return { id: b.user.id as string, token: b.access_token as string }
  }
  const driver = await user('driver', 'Dana Driver')
  const dispatcher = await user('dispatcher', 'Sam Dispatcher')

  const createTask = (body: Record<string, unknown>, token = carrier.token) => h.call('POST', '/api/v1/tasks', { token, body })
  const task = async (body: Record<string, unknown> = {}, token = carrier.token) => {
    const res = await createTask({ type: 'delivery', address: newAddress(), ...body }, token)
    if (res.statusCode !== 201) throw new Error(`task: ${res.body}`)
    return res.json().task
  }
  const transition = (ulid: string, action: string, body?: unknown, token = carrier.token) =>
    h.call('POST', `/api/v1/tasks/${ulid}/${action}`, { token, ...(body !== undefined ? { body } : {}) })

  return { carrier, shipper, shipment, place: placeRes.json().place, driver, dispatcher, createTask, task, transition }
}

/** A multipart body with one `file` part. */
export function multipart(data: Buffer, filename: string, type: string, description?: string) {
  const boundary = `----task${Math.random().toString(36).slice(2)}`
  const parts = [
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`), data, Buffer.from('\r\n'),
    ...(description !== undefined ? [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="description"\r\n\r\n${description}\r\n`)] : []),
    Buffer.from(`--${boundary}--\r\n`),
  ]
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` }
}

export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 1)])
export const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n')

export async function upload(h: TestApp, ulid: string, token: string, data: Buffer, filename: string, type: string) {
  const { payload, contentType } = multipart(data, filename, type)
  const res = await h.app.inject({ method: 'POST', url: `/api/v1/tasks/${ulid}/attachments`, payload, headers: { authorization: `Bearer ${token}`, 'content-type': contentType, accept: 'application/json' } })
  return Object.assign(res, { json: () => JSON.parse(res.body) })
}
