import type { TestApp } from '../helpers/build.js'
import { newAddress, tasksWorld } from '../tasks/fixtures.js'

export { newAddress }

/** The tasks world (carrier, shipper, a carried shipment, a place, a driver) and helpers for workflows. */
export async function workflowsWorld(h: TestApp) {
  const w = await tasksWorld(h)
  const start = (body: Record<string, unknown>, token = w.carrier.token) => h.call('POST', '/api/v1/workflows', { token, body })
  const started = async (body: Record<string, unknown> = {}, token = w.carrier.token) => {
    const res = await start({ blueprint_key: 'pickup-delivery', data: { origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress() }, ...body }, token)
    if (res.statusCode !== 201) throw new Error(`workflow: ${res.body}`)
    return res.json().workflow.data
  }
  const get = async (id: number, token = w.carrier.token) => {
    const res = await h.call('GET', `/api/v1/workflows/${id}`, { token })
    if (res.statusCode !== 200) throw new Error(`get workflow: ${res.body}`)
    return res.json()
  }
  const publish = async (body: Record<string, unknown>, token = w.carrier.token) => {
    const c = await h.call('POST', '/api/v1/blueprints', { token, body })
    if (c.statusCode !== 201) throw new Error(`blueprint: ${c.body}`)
    const id = c.json().blueprint.id
    const p = await h.call('POST', `/api/v1/blueprints/${id}/publish`, { token })
    if (p.statusCode !== 200) throw new Error(`publish: ${p.body}`)
    return p.json().blueprint
  }
  return { ...w, start, started, get, publish }
}
