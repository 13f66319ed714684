import t from 'tap'
import Fastify from 'fastify'
import { hookRoutes, takesMultipart } from '../../src/http/route-hooks.js'
import { nextRequestId } from '../../src/http/app.js'

t.test('hookRoutes attaches onRequest/onResponse hooks to the matching routes only', async (t) => {
  const app = Fastify()
  const seen: string[] = []
  hookRoutes(app, takesMultipart, 'onRequest', (req: any, _reply: unknown, done: () => void) => { seen.push(`req ${req.url}`); done() })
  hookRoutes(app, takesMultipart, 'onResponse', async (req: any) => { seen.push(`res ${req.url}`) })
  app.post('/upload', { schema: { consumes: ['multipart/form-data'] } as any }, async () => ({ ok: true }))
  app.get('/plain', async () => ({ ok: true }))
  await app.ready()
  t.equal((await app.inject({ method: 'GET', url: '/plain' })).statusCode, 200)
  t.same(seen, [], 'a route without multipart bodies runs none of them')
  await app.inject({ method: 'POST', url: '/upload', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.same(seen, ['req /upload', 'res /upload'])
  await app.close()
})

t.test('generated request ids are UUID-shaped and unique', async (t) => {
  const ids = new Set(Array.from({ length: 1000 }, () => nextRequestId()))
  t.equal(ids.size, 1000)
  for (const id of [...ids].slice(0, 3)) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
})
