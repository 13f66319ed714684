import t from 'tap'
import { build } from '../helpers/build.js'

// Issue 10 §1: the operations half belongs to carrier organizations. Every documented route of it
// is tried, so a route added later without the operationsRoutes wrapper fails here.
const OPERATIONS = ['users', 'vehicles', 'tasks', 'webhooks', 'blueprints', 'workflows', 'routes', 'live-links', 'drivers']

t.test('a shipper-only organization gets 403 {message, code} on every operations route', async (t) => {
  const h = await build(t)
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const routes: Array<[string, string]> = []
  for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
    const m = /^\/api\/v1\/([a-z-]+)/.exec(path)
    if (!m || !OPERATIONS.includes(m[1]!)) continue
    for (const method of Object.keys(ops)) if (['get', 'post', 'put', 'patch', 'delete'].includes(method)) routes.push([method.toUpperCase(), path])
  }
  for (const area of ['users', 'vehicles', 'drivers']) t.ok(routes.some(([, p]) => p.startsWith(`/api/v1/${area}`)), `${area} routes found in the document`)
  for (const [method, path] of routes) {
    const url = path.replace(/\{[^}]+\}/g, 'x1')
    const body = ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined
    const res = await h.call(method, url, { token: shipper.token, body })
    t.equal(res.statusCode, 403, `${method} ${path}`)
    t.match(res.json(), { message: String, code: 'carrier_role_required' }, `${method} ${path}`)
    const ok = await h.call(method, url, { token: carrier.token, body })
    // Past the gate; `/drivers/me/…` then asks for a driver's own token (403 of its own kind).
    if (path.startsWith('/api/v1/drivers/')) t.equal(ok.json().code, 'driver_token_required', `${method} ${path}: a carrier organization gets past the gate`)
    else t.not(ok.statusCode, 403, `${method} ${path}: a carrier organization gets past the gate`)
  }
})
