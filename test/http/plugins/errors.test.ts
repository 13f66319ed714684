import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Type } from 'typebox'
import { sql } from 'kysely'
import { build } from '../../helpers/build.js'
import type { HttpModule } from '../../../src/http/module.js'
import { fieldChecks } from '../../../src/http/plugins/validation.js'

const Nested = Type.Object({
  name: Type.String({ minLength: 1 }),
  origin: Type.Object({ street: Type.String(), zip: Type.String({ maxLength: 5 }) }, { additionalProperties: false }),
  packages: Type.Array(Type.Object({
    grams: Type.Integer({ minimum: 1 }),
    items: Type.Array(Type.Object({ sku: Type.String() }, { additionalProperties: false })),
  }, { additionalProperties: false }), { minItems: 1 }),
  kind: Type.Optional(Type.Union([Type.Literal('box'), Type.Literal('pallet')])),
}, { additionalProperties: false })

const Range = Type.Object({ name: Type.String(), from: Type.Integer(), to: Type.Integer() }, { additionalProperties: false })

let handled = 0

/** Throwaway routes that exist only in this test. */
const testModule: HttpModule = {
  name: 'errors-test',
  async routes(app, { platform }) {
    app.post('/test/nested', { schema: { body: Nested } }, async () => { handled++; return { ok: true } })
    app.post('/test/range', {
      schema: { body: Range },
      preValidation: fieldChecks((body, errors) => {
        if (typeof body.from === 'number' && typeof body.to === 'number' && body.to < body.from) errors.add('to', 'The to must be at least from.')
        // Reads a nested field without checking: throws on bodies the schema rejects anyway.
        if ((body as any).name.length > 50) errors.add('name', 'Too long.')
      }),
    }, async () => { handled++; return { ok: true } })
    app.get('/test/throws', async () => {
      const err = new Error('insert into es_events (stream_id) values ($1) -- syntax error at or near "x"')
      throw err
    })
    app.get('/test/bad-sql', async () => { await sql`select * from no_such_table_for_test`.execute(platform.db) })
    app.get('/test/int/:n', async (req) => {
      // No schema limit on purpose: the database refuses the value (SQLSTATE 22003).
      const { n } = req.params as { n: string }
      return (await sql<{ v: number }>`select ${n}::int as v`.execute(platform.db)).rows[0]
    })
  },
  async adminRoutes(app) {
    app.post('/test/nested', { schema: { body: Nested } }, async () => ({ ok: true }))
  },
}

t.test('HTTP error conventions', async (t) => {
  const h = await build(t, {}, {}, { extraModules: [testModule] })
  const org = await h.createOrganization()
  const bad = {
    name: '',
    origin: { zip: '123456', extra: 1 },
    packages: [{ grams: 1, items: [] }, { grams: '5', items: [{ sku: 1 }, {}] }],
    kind: 'crate',
    bogus: true,
  }

  t.test('422 names every failing field by dot path, nested arrays included', async (t) => {
    const res = await h.call('POST', '/api/v1/test/nested', { token: org.token, body: bad })
    t.equal(res.statusCode, 422)
    const body = res.json()
    t.same(Object.keys(body).sort(), ['errors', 'message'])
    t.same(Object.keys(body.errors).sort(), [
      'bogus', 'kind', 'name', 'origin.extra', 'origin.street', 'origin.zip',
      'packages.1.grams', 'packages.1.items.0.sku', 'packages.1.items.1.sku',
    ].sort())
    for (const msgs of Object.values(body.errors)) t.ok(Array.isArray(msgs) && (msgs as string[]).every((m) => typeof m === 'string' && m.length > 0))
    t.match(body.errors.kind[0], /allowed: box, pallet/, 'a union of literals is one message listing them')
    t.match(body.message, /\(and 8 more errors\)/)
    t.equal(handled, 0, 'the handler never ran')
  })

  t.test('the same on an admin endpoint, and no coercion of body types', async (t) => {
    const res = await h.admin('POST', '/test/nested', { ...bad, name: 5 })
    t.equal(res.statusCode, 422)
    t.ok((res.json() as any).errors.name)
    t.ok((res.json() as any).errors['packages.1.grams'], 'the string "5" is not an integer')
  })

  t.test('cross-field checks are reported together with schema errors', async (t) => {
    const both = await h.call('POST', '/api/v1/test/range', { token: org.token, body: { name: 7, from: 5, to: 1 } })
    t.equal(both.statusCode, 422)
    t.same(Object.keys(both.json().errors).sort(), ['name', 'to'], 'schema error (name) and cross-field error (to) in one answer')
    const crossOnly = await h.call('POST', '/api/v1/test/range', { token: org.token, body: { name: 'x', from: 5, to: 1 } })
    t.equal(crossOnly.statusCode, 422)
    t.same(Object.keys(crossOnly.json().errors), ['to'])
    const crashing = await h.call('POST', '/api/v1/test/range', { token: org.token, body: { from: 1, to: 2 } })
    t.equal(crashing.statusCode, 422, 'a check that throws on input the schema rejects does not turn it into a 500')
    t.same(Object.keys(crashing.json().errors), ['name'])
    t.equal(handled, 0)
    const ok = await h.call('POST', '/api/v1/test/range', { token: org.token, body: { name: 'x', from: 1, to: 2 } })
    t.equal(ok.statusCode, 200)
    t.equal(handled, 1)
  })

  t.test('malformed JSON is a 400 {message, code}', async (t) => {
    for (const payload of ['{"name": ', '{bad', '[[[[', '{"__proto__": {"admin": true}']) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/test/nested', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' }, payload })
      t.equal(res.statusCode, 400, payload)
      t.same(Object.keys(res.json()).sort(), ['code', 'message'])
      t.equal(res.json().code, 'invalid_json')
    }
  })

  t.test('a __proto__ key, or a constructor holding prototype, in a JSON body: a 422 naming it with the other failing fields, not "not valid JSON"', async (t) => {
    await h.app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`
    const valid = '"name": "x", "origin": {"street": "s", "zip": "1"}, "packages": [{"grams": 1, "items": []}]'
    const cases: Array<[string, string[]]> = [
      [`{"__proto__": {"admin": true}, ${valid}}`, ['__proto__']],
      // Nested, escaped, and beside a field the schema refuses: every one named in one answer.
      ['{"name": "", "origin": {"street": "s", "zip": "1", "__proto__": 1}, "packages": [{"grams": 1, "items": [{"sku": "a", "\\u005f_proto__": {}}]}]}',
        ['name', 'origin.__proto__', 'packages.0.items.0.__proto__']],
      // What is left of the constructor once its prototype is refused is a field the schema does not allow.
      [`{"constructor": {"prototype": {"admin": true}}, ${valid}}`, ['constructor', 'constructor.prototype']],
    ]
    const before = handled
    for (const [body, names] of cases) {
      const res = await fetch(`${base}/api/v1/test/nested`, { method: 'POST', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' }, body })
      const answer = await res.json() as { message: string; errors?: Record<string, string[]> }
      t.equal(res.status, 422, body)
      t.same(Object.keys(answer.errors ?? {}).sort(), names, `${body}: names ${names.join(', ')}`)
      const refused = names.find((n) => n.endsWith('__proto__') || n.endsWith('.prototype'))!
      t.match(answer.errors?.[refused]?.[0], /not allowed/, `${refused}: says what is refused`)
      t.notMatch(answer.message, /not valid JSON/i)
    }
    t.equal(handled, before, 'no handler ran')
    const fine = await fetch(`${base}/api/v1/test/nested`, { method: 'POST', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' }, body: `{${valid}}` })
    t.equal(fine.status, 200, 'the same body without the key is served')
  })

  t.test('other errors are {message, code}', async (t) => {
    const cases: Array<[string, Promise<any>, number, string]> = [
      ['no token', h.call('GET', '/api/v1/organizations/my'), 401, 'unauthenticated'],
      ['unknown route', h.call('GET', '/api/v1/nothing/here', { token: org.token }), 404, 'route_not_found'],
      ['unknown route, no token', h.call('GET', '/nothing'), 404, 'route_not_found'],
      ['wrong method', h.call('PUT', '/api/v1/organizations/my', { token: org.token }), 404, 'route_not_found'],
      ['unsupported media type', h.app.inject({ method: 'POST', url: '/api/v1/test/nested', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/xml' }, payload: '<a/>' }), 415, 'unsupported_media_type'],
      ['body too large', h.app.inject({ method: 'POST', url: '/api/v1/test/nested', headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'x'.repeat(1_100_000) }) }), 413, 'payload_too_large'],
      ['bad percent-encoding', h.call('GET', '/api/v1/organizations/%E0%A4%A', { token: org.token }), 400, 'bad_url'],
      ['over-long path parameter', h.admin('POST', `/organizations/${'x'.repeat(500)}/suspend`), 414, 'uri_too_long'],
      ['unknown organization', h.admin('POST', '/organizations/org_missing/suspend'), 404, 'not_found'],
    ]
    for (const [name, p, status, code] of cases) {
      const res = await p
      t.equal(res.statusCode, status, name)
      t.same(Object.keys(res.json()).sort(), ['code', 'message'], `${name}: {message, code}`)
      t.equal(res.json().code, code, name)
      t.notMatch(res.body, /FST_ERR|statusCode/, `${name}: no framework internals`)
    }
  })

  t.test('a 500 never shows a stack or SQL', async (t) => {
    for (const url of ['/api/v1/test/throws', '/api/v1/test/bad-sql']) {
      const res = await h.call('GET', url, { token: org.token })
      t.equal(res.statusCode, 500, url)
      t.same(res.json(), { message: 'Internal server error.', code: 'internal_error' })
      t.notMatch(res.body, /insert|select|es_events|no_such_table|\.ts:\d+|at /i)
    }
  })

  t.test('a value the database refuses is a 422, not a 500', async (t) => {
    const res = await h.call('GET', '/api/v1/test/int/99999999999', { token: org.token })
    t.equal(res.statusCode, 422)
    t.ok(res.json().errors.request)
    t.notMatch(res.body, /integer|select|out of range for type/)
  })

  t.test('NUL characters are field errors, wherever they are', async (t) => {
    const query = await h.call('GET', '/api/v1/organizations/my/contracts?filter[global]=a%00b', { token: org.token })
    t.equal(query.statusCode, 422)
    t.ok(query.json().errors['filter[global]'])
    const param = await h.admin('DELETE', '/tokens/tok_%00')
    t.equal(param.statusCode, 422)
    t.ok(param.json().errors.token_id)
    const body = await h.call('POST', '/api/v1/test/nested', { token: org.token, body: { ...bad, packages: [{ grams: 1, items: [{ sku: 'a\u0000' }] }] } })
    t.equal(body.statusCode, 422)
    t.ok(body.json().errors['packages.0.items.0.sku'], 'reported at its dot path')
    t.ok(body.json().errors['origin.zip'], 'together with the schema errors')
  })

  t.test('hostile input never produces a 500', async (t) => {
    const auth = { authorization: `Bearer ${org.token}` }
    const json = { ...auth, 'content-type': 'application/json' }
    const requests: any[] = [
      { method: 'POST', url: '/api/v1/organizations/my/places', headers: json, payload: '' },
      { method: 'POST', url: '/api/v1/organizations/my/places', headers: json, payload: 'null' },
      { method: 'POST', url: '/api/v1/organizations/my/places', headers: json, payload: '"text"' },
      { method: 'POST', url: '/api/v1/organizations/my/places', headers: json, payload: '['.repeat(50_000) },
      { method: 'POST', url: '/api/v1/organizations/my/places', headers: { ...auth, 'content-type': 'multipart/form-data; boundary=x' }, payload: '--x\r\n' },
      { method: 'POST', url: '/api/v1/organizations/my/places', headers: json, payload: JSON.stringify({ name: '\ud800', street: 'x'.repeat(10_000), street_number: 1e308, city_id: 2 ** 60 }) },
      { method: 'GET', url: '/api/v1/organizations/my/contracts?page=99999999999999999999999', headers: auth },
      { method: 'GET', url: '/api/v1/organizations/my/contracts?page=1e400&perPage=-1', headers: auth },
      { method: 'GET', url: '/api/v1/organizations/my/contracts?perPage=1&perPage=2&sort=%27;drop', headers: auth },
      { method: 'GET', url: '/api/v1/organizations/my', headers: { authorization: `Bearer ${'x'.repeat(8000)}` } },
      { method: 'GET', url: '/api/v1/organizations/my', headers: { authorization: 'Bearer a\u00e9' } },
      { method: 'POST', url: '/admin/v1/contracts', headers: { authorization: 'Bearer test-admin-token' }, payload: { carrier_id: 'org_\u0000', shipper_id: [] } },
      { method: 'POST', url: '/admin/v1/organizations', headers: { authorization: 'Bearer test-admin-token' }, payload: { name: 'n', subdomain: 'a'.repeat(63), roles: ['carrier', 'carrier'], timezone: 'Mars/Olympus', currency: '€€€' } },
    ]
    for (const r of requests) {
      const res = await h.app.inject(r)
      t.ok(res.statusCode >= 400 && res.statusCode < 500, `${r.method} ${r.url.slice(0, 80)} → ${res.statusCode}`)
      const body = res.json()
      t.ok(typeof body.message === 'string' && (typeof body.code === 'string' || typeof body.errors === 'object'), 'the API\'s error shape')
    }
  })
})
