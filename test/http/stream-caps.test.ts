// Open event streams capped per client address and per process, through a listening server (issue 31 item 3).
import http from 'node:http'
import t from 'tap'
import { build } from '../helpers/build.js'
import { loadConfig } from '../../src/config.js'
import { StreamSlots } from '../../src/http/stream-slots.js'
import { liveLinkKey, signLiveToken } from '../../src/routes/progress/live-token.js'
import { listen, progressWorld } from '../routes/progress/fixtures.js'

interface Opened {
  status: number
  headers: http.IncomingHttpHeaders
  /** The whole body of a refusal; of a stream, what came so far. */
  body: string
  /** Resolves when the server ends the response. */
  ended: Promise<void>
  close(): void
}

/** A GET of an event stream from a chosen loopback address (the whole of 127/8 is this machine's); resolves at the headers (a refusal: at its end). */
const open = (base: string, path: string, from: string, headers: Record<string, string> = {}) => new Promise<Opened>((ok, fail) => {
  const u = new URL(base)
  const req = http.get({ host: u.hostname, port: u.port, path, localAddress: from, headers: { accept: 'text/event-stream', ...headers } }, (res) => {
    const o: Opened = {
      status: res.statusCode ?? 0, headers: res.headers, body: '',
      ended: new Promise((done) => { res.on('end', () => done()); res.on('close', () => done()) }),
      close: () => req.destroy(),
    }
    res.setEncoding('utf8')
    res.on('data', (c: string) => { o.body += c })
    res.on('error', () => undefined)
    if (o.status === 200) ok(o)
    else res.on('end', () => ok(o))
  })
  req.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'ECONNRESET') fail(err) })
})

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

t.test('settings: 100 per address, 5,000 per process by default; 0 is no cap', async (t) => {
  t.match(loadConfig({}), { sseStreamsPerAddress: 100, sseStreamsPerProcess: 5000 })
  t.match(loadConfig({ SSE_STREAMS_PER_ADDRESS: '0', SSE_STREAMS_PER_PROCESS: '0' }), { sseStreamsPerAddress: 0, sseStreamsPerProcess: 0 })
  const slots = new StreamSlots(0, 0)
  for (let i = 0; i < 10_000; i++) slots.take('a')
  t.equal(slots.open, 10_000)
  const one = new StreamSlots(1, 0)
  const give = one.take('a')
  t.throws(() => one.take('a'), { code: 'too_many_streams', statusCode: 429, retryAfter: 10 })
  give()
  give()
  t.equal(one.open, 0, 'a slot is given back once')
  t.doesNotThrow(() => one.take('a'))
})

t.test('every kind of event stream takes a slot: the cap per address, then per process, 429 with Retry-After; a slot comes back when its stream closes', async (t) => {
  const h = await build(t, { sseStreamsPerAddress: 2, sseStreamsPerProcess: 3, sseHeartbeatMs: 60_000 })
  const w = await progressWorld(h)
  const route = await w.route({ tasks: [], publish: true })
  const livePath = new URL((await h.call('POST', `/api/v1/routes/${route}/live-links`, { token: w.carrier.token, body: {} })).json().url).pathname
  const address = { name: 'A', street: 'S', street_number: '1', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const shipment = (await h.call('POST', '/api/v1/shipments', { token: w.shipper.token, body: { carrier_id: w.carrier.id, is_public: true, origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] } })).json().shipment
  const trackPath = new URL(shipment.public_tracking_url).pathname
  const progress = `/api/v1/routes/${route}/progress/stream`
  const bearer = { authorization: `Bearer ${w.carrier.token}` }
  const base = await listen(h.app)

  // One address: a live page's stream and a tracking page's, then the API's progress stream is one too many.
  const live = await open(base, `${livePath}/stream`, '127.0.0.1')
  const tracking = await open(base, `${trackPath}/stream`, '127.0.0.1')
  t.same([live.status, tracking.status], [200, 200])
  const refused = await open(base, progress, '127.0.0.1', bearer)
  t.equal(refused.status, 429, 'the third stream of one address')
  t.equal(refused.headers['retry-after'], '10')
  t.same(JSON.parse(refused.body), { message: 'Too many open event streams from this address (at most 2); close one, or retry after the time in Retry-After.', code: 'too_many_streams' })
  t.match(refused.headers['content-type'], /^application\/json/, 'the usual error body, not a stream')

  // Another address has its own two, until the process holds three.
  const other = await open(base, progress, '127.0.0.2', bearer)
  t.equal(other.status, 200)
  const full = await open(base, `${trackPath}/stream`, '127.0.0.3')
  t.equal(full.status, 429, 'a third address: the process is full')
  t.equal(full.headers['retry-after'], '10')
  t.equal(JSON.parse(full.body).code, 'too_many_streams')
  t.equal(h.app.streamSlots.open, 3)

  // The client closes one: its slot comes back.
  live.close()
  const shortLived = await eventually('a slot after the client closed its stream', async () => {
    // A live link that ends in two seconds: the server ends the stream then.
    const token = signLiveToken(liveLinkKey(h.platform.secretsKey), route, w.carrier.id, new Date(Date.now() + 2000))
    const s = await open(base, `/live/routes/${token}/stream`, '127.0.0.3')
    return s.status === 200 ? s : undefined
  })
  t.pass('accepted once a stream of the same process closed')
  t.equal((await open(base, `${livePath}/stream`, '127.0.0.1')).status, 429, 'and the process is full again')

  // The server ends one (the link expired): its slot comes back too.
  await shortLived.ended
  const again = await eventually('a slot after the server ended a stream', async () => {
    const s = await open(base, `${livePath}/stream`, '127.0.0.1')
    return s.status === 200 ? s : undefined
  })
  t.pass('accepted once the server ended a stream')

  // Clients that leave before their stream is open hold nothing.
  again.close()
  for (let i = 0; i < 5; i++) {
    const req = http.get({ host: '127.0.0.1', port: new URL(base).port, path: `${trackPath}/stream`, localAddress: '127.0.0.4' })
    req.on('error', () => undefined)
    req.on('socket', (s) => s.on('connect', () => setImmediate(() => req.destroy())))
  }
  tracking.close()
  other.close()
  await eventually('every slot given back', async () => (h.app.streamSlots.open === 0 ? true : undefined))
  t.pass('no slot held once every client left')
})
