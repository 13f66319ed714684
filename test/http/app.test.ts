import t from 'tap'
import { Writable } from 'node:stream'
import { Agent, request } from 'node:http'
import { build } from '../helpers/build.js'
import type { HttpModule } from '../../src/http/module.js'

/** A slow route to hold a request in flight while the server closes. */
let releaseSlow: () => void = () => undefined
let slowStarted: () => void = () => undefined
const slowModule: HttpModule = {
  name: 'slow-test',
  async routes(app) {
    app.get('/test/log', async (req) => { req.log.warn('written by a handler'); return {} })
    app.get('/test/slow', async () => {
      slowStarted()
      await new Promise<void>((resolve) => { releaseSlow = resolve })
      return { finished: true }
    })
  },
}

const get = (port: number, path: string, headers: Record<string, string> = {}, agent: Agent | false = false) =>
  new Promise<{ status: number; body: string; headers: Record<string, unknown> }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }))
    })
    req.on('error', reject)
    req.end()
  })

t.test('request ids: echoed, generated, and in every log line of the request', async (t) => {
  const lines: any[] = []
  const stream = new Writable({ write(chunk, _enc, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l)); cb() } })
  const h = await build(t, {}, {}, { logger: { level: 'info', stream }, extraModules: [slowModule] })
  const org = await h.createOrganization()

  const given = await h.call('GET', '/api/v1/organizations/my', { token: org.token, headers: { 'x-request-id': 'trace-abc.123' } })
  t.equal(given.statusCode, 200)
  t.equal(given.headers['x-request-id'], 'trace-abc.123', 'a caller\'s id is echoed')
  const ofGiven = lines.filter((l) => l.reqId === 'trace-abc.123')
  const done = ofGiven.find((l) => l.msg === 'request completed')
  t.match(done, { level: 30, method: 'GET', url: '/api/v1/organizations/my', statusCode: 200 }, 'one line on completion: method, url, status')
  t.type(done?.responseTime, 'number')

  const generated = await h.call('GET', '/api/v1/organizations/my', { token: org.token })
  const id = generated.headers['x-request-id'] as string
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a UUID when none is given')
  t.not((await h.call('GET', '/health')).headers['x-request-id'], id, 'a new one each time')
  t.ok(lines.some((l) => l.reqId === id))

  const hostile = await h.call('GET', '/health', { headers: { 'x-request-id': 'bad id\twith spaces' } })
  t.not(hostile.headers['x-request-id'], 'bad id\twith spaces', 'an unsafe id is replaced, not logged')

  const failed = await h.call('GET', '/api/v1/organizations/my', { token: 'sk_wrong', headers: { 'x-request-id': 'trace-401' } })
  t.equal(failed.statusCode, 401)
  t.equal(failed.headers['x-request-id'], 'trace-401', 'error responses carry it too')
  t.ok(lines.some((l) => l.reqId === 'trace-401' && l.statusCode === 401))

  await h.call('GET', '/api/v1/test/log', { token: org.token, headers: { 'x-request-id': 'trace-handler' } })
  t.ok(lines.some((l) => l.reqId === 'trace-handler' && l.msg === 'written by a handler'), 'lines a handler writes through req.log carry it too')
})

t.test('graceful shutdown finishes in-flight requests and refuses new connections', async (t) => {
  const h = await build(t, {}, {}, { extraModules: [slowModule] })
  const org = await h.createOrganization()
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (h.app.server.address() as { port: number }).port

  // Kept-alive connections, one idle and one busy: neither may hold the close up past the in-flight request.
  const agent = new Agent({ keepAlive: true, maxSockets: 4 })
  t.teardown(() => agent.destroy())
  t.equal((await get(port, '/health', {}, agent)).status, 200)
  const started = new Promise<void>((resolve) => { slowStarted = resolve })
  const inFlight = get(port, '/api/v1/test/slow', { authorization: `Bearer ${org.token}` }, agent)
  await started
  const closeStart = Date.now()
  const closing = h.app.close()
  let closed = false
  void closing.then(() => { closed = true })
  await new Promise((r) => setTimeout(r, 100))
  t.equal(closed, false, 'close waits for the in-flight request')
  await t.rejects(get(port, '/health'), { code: 'ECONNREFUSED' }, 'new connections are refused while closing')
  releaseSlow()
  const res = await inFlight
  t.equal(res.status, 200)
  t.same(JSON.parse(res.body), { finished: true })
  await closing
  t.equal(closed, true)
  t.ok(Date.now() - closeStart < 5000, `closed ${Date.now() - closeStart} ms after the call, not after the keep-alive timeout`)
  await t.rejects(get(port, '/health'), { code: 'ECONNREFUSED' })
})
