import t from 'tap'
import { build } from '../helpers/build.js'

t.test('the shipment routes are documented in the OpenAPI document', async (t) => {
  const h = await build(t)
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const paths = Object.keys(res.json().paths)
  for (const p of ['/api/v1/shipments', '/api/v1/shipments/{id}', '/api/v1/shipments/{id}/cancel', '/api/v1/shipments/{id}/ready',
    '/api/v1/shipments/{id}/tracking', '/api/v1/shipments/tracking/bulk', '/api/v1/shipments/{id}/attachments',
    '/api/v1/shipments/{id}/label', '/api/v1/shipments/{id}/events', '/api/v1/shipment-statuses', '/api/v1/shipment-statuses/{code}']) {
    t.ok(paths.includes(p), p)
  }
})
