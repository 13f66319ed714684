import t from 'tap'
import { build } from '../helpers/build.js'
import { LENGTH_UNITS, TEMPERATURE_UNITS, WEIGHT_UNITS } from '../../src/shared/measures.js'
import { CARRIER_STATUSES, FAILED_DELIVERY_REASONS } from '../../src/shipments/shipment.js'

/**
 * What a generator needs of `/openapi.json` (issue 25, item 1): named components and `$ref`s, a
 * description on every response, a discriminator it can follow, and a server to send requests to.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch']

function* refs(node: unknown): Generator<string> {
  if (Array.isArray(node)) for (const n of node) yield* refs(n)
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') yield value
      else yield* refs(value)
    }
  }
}

t.test('resources, requests and errors are named components, used by $ref', async (t) => {
  const h = await build(t)
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const schemas = doc.components.schemas
  for (const name of ['Shipment', 'Task', 'Route', 'Workflow', 'Blueprint', 'Carrier', 'Organization', 'Place', 'Address', 'Package',
    'CreateShipmentRequest', 'AddressInput', 'PackageInput', 'CreateTaskRequest', 'CreateRouteRequest', 'ApiError', 'ValidationError',
    'TaskStatus', 'TaskType', 'FailureReason', 'RouteStatus']) {
    t.ok(schemas[name], `components.schemas.${name}`)
  }
  const shipments = doc.paths['/api/v1/shipments'].post
  t.same(shipments.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/CreateShipmentRequest' })
  t.same(shipments.responses['201'].content['application/json'].schema, { $ref: '#/components/schemas/ShipmentEnvelope' })
  t.same(shipments.responses['422'], { $ref: '#/components/responses/ValidationFailed' })
  t.same(doc.components.responses.ValidationFailed.content['application/json'].schema, { $ref: '#/components/schemas/ValidationError' })
  t.same(schemas.ShipmentEnvelope.properties.shipment, { $ref: '#/components/schemas/Shipment' }, 'the spec\'s wrapper stays, its content is named')
  t.same(schemas.ShipmentEnvelope.required, ['success', 'shipment'])
  t.same(doc.paths['/api/v1/shipments/{id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Shipment' },
    'GET /shipments/{id} answers the shipment at root')
  t.same(schemas.Shipment.properties.origin, { $ref: '#/components/schemas/Address' })
  t.same(schemas.Task.properties.status, { $ref: '#/components/schemas/TaskStatus' })

  const all = [...refs(doc)]
  const target = (ref: string) => ref.slice(2).split('/').reduce((node: any, key) => node?.[key], doc)
  t.same(all.filter((ref) => !target(ref)), [], 'every $ref names a component')
  const used = new Set(all)
  for (const kind of ['schemas', 'responses']) {
    t.same(Object.keys(doc.components[kind]).filter((name) => !used.has(`#/components/${kind}/${name}`)), [], `every component of ${kind} is used`)
  }
  t.same(doc.paths['/api/v1/shipments/{id}'].get.responses['404'], { $ref: '#/components/responses/NotFound' }, 'errors are shared responses')
  t.ok(JSON.stringify(doc).length < 250_000, 'the document is no longer everything inlined')
})

t.test('closed sets are enums', async (t) => {
  const h = await build(t)
  const { components: { schemas } } = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const values = (schema: any): unknown[] => schema.enum ?? schema.anyOf?.flatMap(values) ?? []
  t.same(values(schemas.TaskStatus), ['pending', 'started', 'arrived', 'complete', 'failed', 'cancelled'])
  t.same(values(schemas.RouteStatus), ['draft', 'published', 'blocked', 'started', 'finished'])
  t.same(values(schemas.TaskType), ['pickup', 'delivery', 'inspection', 'return', 'service'])
  t.same(values(schemas.FailureReason), ['no_answer', 'bad_address', 'rejected', 'damaged', 'closed', 'other'])
  t.same(schemas.WeightMeasure.properties.unit, { $ref: '#/components/schemas/WeightUnit' })
  t.same(values(schemas.WeightUnit), WEIGHT_UNITS, 'a package\'s weight is given back in a canonical unit')
  t.same(values(schemas.LengthUnit), LENGTH_UNITS)
  t.same(values(schemas.TemperatureUnit), TEMPERATURE_UNITS)
  t.equal(schemas.PackageInput.properties.weight_unit.anyOf[0].type, 'string', 'requests take any spelling of a unit (spec: input is tolerant)')
  t.same(schemas.ReportStatusRequest.properties.status, { $ref: '#/components/schemas/CarrierStatus' })
  t.same(values(schemas.CarrierStatus), CARRIER_STATUSES, 'the statuses a carrier reports')
  t.same(values(schemas.CarrierStatusReason), [...FAILED_DELIVERY_REASONS, 'lost'])
  t.notOk(JSON.stringify(schemas).includes('x-checked-enum'), 'the validation-only marker is not shown')
})

t.test('a blueprint action names its branch by `do`', async (t) => {
  const h = await build(t)
  const { components: { schemas } } = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const action = schemas.BlueprintAction
  t.equal(action.discriminator.propertyName, 'do')
  t.equal(action.discriminator.mapping.create_task, '#/components/schemas/CreateTaskAction')
  t.equal(Object.keys(action.discriminator.mapping).length, action.oneOf.length, 'every branch is mapped')
})

t.test('every response is described; every operation has a summary', async (t) => {
  const h = await build(t)
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation) continue
      t.ok(operation.summary, `${method} ${path} has a summary`)
      for (const [status, given] of Object.entries<any>(operation.responses)) {
        const response = given.$ref ? doc.components.responses[given.$ref.split('/').pop()] : given
        t.ok(response.description && response.description !== 'Default Response', `${method} ${path} ${status}: ${response.description}`)
      }
      t.ok(Object.keys(operation.responses).some((s) => s.startsWith('2')), `${method} ${path} documents its success`)
      t.ok(operation.responses['4XX'] && operation.responses['5XX'], `${method} ${path} documents the shape of any other error`)
    }
  }
  const label = doc.paths['/api/v1/shipments/{id}/label'].get.responses['200']
  t.ok(label.content['application/pdf'], 'the label is a PDF')
  t.ok(doc.paths['/api/v1/routes/{id}/progress/stream'].get.responses['200'].content['text/event-stream'], 'the progress stream is server-sent events')
})

t.test('servers: the request\'s own origin without PUBLIC_BASE_URL', async (t) => {
  const h = await build(t)
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'shipping.internal:8080' } })
  t.same(res.json().servers, [{ url: 'http://shipping.internal:8080' }])
})

t.test('servers: PUBLIC_BASE_URL when set', async (t) => {
  const h = await build(t, {}, { PUBLIC_BASE_URL: 'https://api.shipping.test/platform' })
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'shipping.internal:8080' } })
  t.same(res.json().servers, [{ url: 'https://api.shipping.test/platform' }])
  t.equal(res.json().paths['/api/v1/shipments'].post.operationId, 'createShipment', 'paths keep their area prefix')
})
