import t from 'tap'
import { build } from '../helpers/build.js'
import { OPERATIONS, TAGS } from '../../src/http/openapi/operations.js'
import { SECURITY_SCHEMES, securitySchemeOf } from '../../src/http/openapi/security.js'

/**
 * The operations table (src/http/openapi/operations.ts) and the routes agree both ways: a route
 * added without its line, or a line left behind by a removed route, fails here.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch']

t.test('every documented route has an entry in the operations table, and every entry a route', async (t) => {
  const h = await build(t)
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const documented = new Map<string, any>()
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) if (item[method]) documented.set(`${method.toUpperCase()} ${path}`, item[method])
  }
  t.ok(documented.size >= 100, `${documented.size} operations documented`)

  const missing = [...documented.keys()].filter((key) => !OPERATIONS.has(key))
  t.same(missing, [], 'routes without an operationId: add them to src/http/openapi/operations.ts')
  const stale = [...OPERATIONS.keys()].filter((key) => !documented.has(key))
  t.same(stale, [], 'entries of the operations table that name no route')

  const ids = [...OPERATIONS.values()].map((o) => o.operationId)
  t.equal(new Set(ids).size, ids.length, 'operation ids are unique')
  for (const id of ids) t.match(id, /^[a-z][A-Za-z0-9]+$/, `${id} is a camelCase method name`)

  for (const [key, operation] of documented) {
    const entry = OPERATIONS.get(key)
    if (!entry) continue
    t.equal(operation.operationId, entry.operationId, `${key} is ${entry.operationId}`)
    t.same(operation.tags, [entry.tag], `${key} is listed under ${entry.tag}`)
  }
  t.same(doc.paths['/api/v1/shipments'].post.operationId, 'createShipment')
  t.same(doc.paths['/api/v1/tasks'].get.operationId, 'listTasks')
})

t.test('each tag is described, in the order of the table', async (t) => {
  const h = await build(t)
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.same(doc.tags.map((tag: any) => tag.name), Object.keys(TAGS))
  for (const tag of doc.tags) t.ok(tag.description.length > 10, `${tag.name} has a description`)
  const used = new Set([...OPERATIONS.values()].map((o) => o.tag))
  t.same(Object.keys(TAGS).filter((tag) => !used.has(tag as never)), [], 'every tag lists an operation')
})

t.test('each operation takes the credential of its area', async (t) => {
  t.equal(securitySchemeOf('/api/v1/shipments'), 'organizationToken')
  t.equal(securitySchemeOf('/carrier/v1/me'), 'carrierApiKey')
  t.equal(securitySchemeOf('/admin/v1/organizations'), 'adminToken')
  t.equal(securitySchemeOf('/audit/v1/public-key'), null)
  t.equal(securitySchemeOf('/health'), undefined)

  const h = await build(t)
  const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.notOk('security' in doc, 'no document-wide scheme: each operation names its own')
  t.same(Object.keys(doc.components.securitySchemes).sort(), Object.keys(SECURITY_SCHEMES).sort())
  const expected: Record<string, unknown[]> = {
    '/api/v1/': [{ organizationToken: [] }], '/carrier/v1/': [{ carrierApiKey: [] }], '/admin/v1/': [{ adminToken: [] }], '/audit/v1/': [],
  }
  const seen = new Set<string>()
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    const area = Object.keys(expected).find((prefix) => path.startsWith(prefix))
    t.ok(area, `${path} is in one of the four areas`)
    if (!area) continue
    seen.add(area)
    for (const method of METHODS) if (item[method]) t.same(item[method].security, expected[area], `${method} ${path}`)
  }
  t.same([...seen].sort(), Object.keys(expected).sort(), 'all four areas are documented')
  // The credential a scheme names is the one the area really takes.
  const org = await h.createOrganization()
  t.equal((await h.call('POST', `/admin/v1/organizations/${org.id}/tokens`, { token: org.token, body: {} })).statusCode, 401, 'an organization token is not the admin token')
  t.equal((await h.call('GET', '/carrier/v1/me', { token: org.token })).statusCode, 401, 'nor a carrier API key')
  t.equal((await h.call('GET', '/audit/v1/public-key')).statusCode, 200, 'the audit proofs take none')
})
