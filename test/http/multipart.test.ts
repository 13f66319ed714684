import t, { type Test } from 'tap'
import Fastify from 'fastify'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { build } from '../helpers/build.js'
import { closing, part, uploadRoutes } from '../shipments/fixtures/upload-routes.js'
import { requireUploadsScope, uploads } from '../../src/http/plugins/multipart.js'

const PDF = Buffer.from('%PDF-1.4 label')
const MB10 = 10 * 1024 * 1024

type Res = { statusCode: number; headers: Record<string, unknown>; body: string; json(): any }

/** A 4xx in the API's shape: 422 `{message, errors}` naming `field`, else `{message, code}`. */
function assertApiError(t: Test, res: Res, status: number, label: string, field?: string) {
  t.equal(res.statusCode, status, `${label}: ${res.body.slice(0, 300)}`)
  t.match(String(res.headers['content-type']), /^application\/json/, `${label}: JSON`)
  const body = res.json()
  t.type(body.message, 'string', `${label}: a message`)
  if (status === 422) t.ok(body.errors?.[field!], `${label}: names ${field}`)
  else t.type(body.code, 'string', `${label}: a code`)
}

t.test('malformed multipart bodies are 4xx JSON on both upload routes, never a 500', async (t) => {
  const h = await build(t)
  const u = await uploadRoutes(h)
  const id = await u.newShipment()

  for (const route of u.routes) {
    const file = (b: string, data: Buffer = PDF) => part(b, route.filePart, data, 'a.pdf')
    const cases: [string, string, string | Buffer, number, string?][] = [
      ['no boundary', 'multipart/form-data', Buffer.concat([file('x'), closing('x')]), 400],
      ['a boundary the body never uses', 'multipart/form-data; boundary=x', Buffer.concat([file('y'), closing('y')]), 400],
      ['a truncated part', 'multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="${route.filePart}"; filename="a.pdf"\r\n\r\n%PDF`, 400],
      ['an empty boundary', 'multipart/form-data; boundary=""', Buffer.concat([file('x'), closing('x')]), 400],
      ['a boundary longer than the parser takes', `multipart/form-data; boundary=${'b'.repeat(300)}`, Buffer.concat([file('b'.repeat(300)), closing('b'.repeat(300))]), 400],
      ['not multipart at all', 'multipart/form-data; boundary=x', 'hello', 400],
      ['a part named constructor', 'multipart/form-data; boundary=x', Buffer.concat([part('x', 'constructor', 'v'), file('x'), closing('x')]), 400],
      ['a JSON field that is not JSON', 'multipart/form-data; boundary=x', Buffer.concat([
        Buffer.from('--x\r\nContent-Disposition: form-data; name="meta"\r\nContent-Type: application/json\r\n\r\n{nope\r\n'), file('x'), closing('x')]), 400],
      ['an empty body', 'multipart/form-data; boundary=x', '', 422, route.filePart],
      ['only the closing delimiter', 'multipart/form-data; boundary=x', closing('x'), 422, route.filePart],
      ['the wrong part name', 'multipart/form-data; boundary=x', Buffer.concat([part('x', 'photo', PDF, 'a.pdf'), closing('x')]), 422, route.filePart],
      ['an empty file', 'multipart/form-data; boundary=x', Buffer.concat([file('x', Buffer.alloc(0)), closing('x')]), 422, route.filePart],
      ['a file over 10 MB', 'multipart/form-data; boundary=x', Buffer.concat([file('x', Buffer.alloc(MB10 + 1, 1)), closing('x')]), 413],
      ['six files', 'multipart/form-data; boundary=x', Buffer.concat([...Array.from({ length: 6 }, (_, i) => part('x', `f${i}`, PDF, `${i}.pdf`)), closing('x')]), 413],
      ['21 fields', 'multipart/form-data; boundary=x', Buffer.concat([...Array.from({ length: 21 }, (_, i) => part('x', `k${i}`, 'v')), file('x'), closing('x')]), 413],
    ]
    for (const [label, type, payload, status, field] of cases) {
      assertApiError(t, await u.post(route, id, payload, type), status, `${route.name}, ${label}`, field)
    }
  }

  const attachments = await h.call('GET', `/api/v1/shipments/${id}/attachments`, { token: u.org.token })
  t.same(attachments.json().attachments, [], 'no attachment was stored')
  const seen = await h.call('GET', `/carrier/v1/shipments/${id}`, { token: u.apiKey })
  t.equal(seen.json().carrier_state, 'processing', 'the shipment was not documented')

  t.test('well-formed uploads still work', async (t) => {
    const [attachment, documents] = u.routes
    const up = await u.post(attachment!, id, Buffer.concat([part('x', 'description', 'Invoice'), part('x', 'file', 'hello', 'invoice.txt', 'text/plain'), closing('x')]), 'multipart/form-data; boundary=x')
    t.equal(up.statusCode, 201, up.body)
    t.equal(up.json().attachment.description, 'Invoice')
    const doc = await u.post(documents!, id, Buffer.concat([part('x', 'label', PDF, 'label.pdf'), closing('x')]), 'multipart/form-data; boundary=x')
    t.equal(doc.statusCode, 200, doc.body)
    t.equal(doc.json().shipment.carrier_state, 'pending_preparation')
  })

  t.test('a multipart body sent to a route that takes none is a 415, and those routes run no multipart hooks', async (t) => {
    const res = await h.app.inject({
      method: 'POST', url: '/api/v1/shipments', payload: Buffer.concat([part('x', 'carrier_id', u.org.id), closing('x')]),
      headers: { authorization: `Bearer ${u.org.token}`, 'content-type': 'multipart/form-data; boundary=x' },
    })
    assertApiError(t, res, 415, 'POST /shipments')

    // @fastify/multipart's onRequest hook listens for the response's 'close' to clean its temp files:
    // seen from the handler's start, it tells which routes ran the plugin's hooks.
    const ranHooks = new Map<string, boolean>()
    const onHandlerStart = (message: unknown) => {
      const { request, reply } = message as { request: any; reply: any }
      const cleanup = reply.raw.listeners('close').some((f: unknown) => String(f).includes('cleanRequestFiles'))
      ranHooks.set(`${request.method} ${request.routeOptions.url}`, cleanup)
    }
    subscribe('tracing:fastify.request.handler:start', onHandlerStart)
    t.teardown(() => { unsubscribe('tracing:fastify.request.handler:start', onHandlerStart) })
    const [attachment, documents] = u.routes
    await u.post(attachment!, id, closing('x'), 'multipart/form-data; boundary=x')
    await u.post(documents!, id, closing('x'), 'multipart/form-data; boundary=x')
    await h.call('GET', `/api/v1/shipments/${id}`, { token: u.org.token })
    await h.call('GET', `/api/v1/shipments/${id}/attachments`, { token: u.org.token })
    await h.call('GET', '/carrier/v1/shipments', { token: u.apiKey })
    await h.call('PUT', `/carrier/v1/shipments/${id}/tracking`, { token: u.apiKey, body: { tracking_number: 'T-1' } })
    t.same(Object.fromEntries(ranHooks), {
      'POST /api/v1/shipments/:id/attachments': true,
      'POST /carrier/v1/shipments/:shipment_id/documents': true,
      'GET /api/v1/shipments/:id': false,
      'GET /api/v1/shipments/:id/attachments': false,
      'GET /carrier/v1/shipments': false,
      'PUT /carrier/v1/shipments/:shipment_id/tracking': false,
    })
  })
})

t.test('a route that declares a multipart body must register the uploads plugin in its scope', async (t) => {
  const route = { schema: { consumes: ['multipart/form-data'] } } as any
  const without = Fastify()
  without.addHook('onRoute', requireUploadsScope)
  without.register(async (scope) => { scope.post('/up', route, async () => ({})) })
  await t.rejects(async () => { await without.ready() }, /register the uploads plugin/)

  const withIt = Fastify()
  withIt.addHook('onRoute', requireUploadsScope)
  withIt.register(async (scope) => { await scope.register(uploads); scope.post('/up', route, async () => ({})) })
  withIt.register(async (scope) => { scope.post('/json', async () => ({})) })
  await withIt.ready()
  t.pass('with the plugin, and for a route without multipart, it starts')
  await withIt.close()
})
