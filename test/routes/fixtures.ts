import type { TestApp } from '../helpers/build.js'
import { tasksWorld } from '../tasks/fixtures.js'

export { newAddress } from '../tasks/fixtures.js'

/** The tasks world plus a van with a capacity and helpers for the routes API. */
export async function routesWorld(h: TestApp) {
  const w = await tasksWorld(h)
  const token = w.carrier.token
  const vehicle = async (capacity: Record<string, number | null>, name = 'Van') => {
    const res = await h.call('POST', '/api/v1/vehicles', { token, body: { name, plate: `P${Math.random().toString(36).slice(2, 8)}`, capacity } })
    if (res.statusCode !== 201) throw new Error(`vehicle: ${res.body}`)
    return res.json().vehicle as { id: string }
  }
  const api = (method: string, path: string, body?: unknown, as = token) => h.call(method, `/api/v1${path}`, { token: as, ...(body !== undefined ? { body } : {}) })
  const route = async (body: Record<string, unknown> = {}) => {
    const res = await api('POST', '/routes', { shift_date: '2026-11-26', ...body })
    if (res.statusCode !== 201) throw new Error(`route: ${res.body}`)
    return res.json().route
  }
  const load = (grams: number, volume_cm3 = 0, packages = 1) => ({ grams, volume_cm3, packages })
  return { ...w, vehicle, api, route, load }
}
