// The live route page's per-address budget, through a listening server (issue 31 item 3).
import http from 'node:http'
import t from 'tap'
import { build } from '../../helpers/build.js'
import { loadConfig } from '../../../src/config.js'
import { listen, progressWorld } from './fixtures.js'

/** A GET from a chosen loopback address (the whole of 127/8 is the machine's own), the body read to its end. */
const get = (base: string, path: string, from = '127.0.0.1') => new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((ok, fail) => {
  const u = new URL(base)
  const req = http.get({ host: u.hostname, port: u.port, path, localAddress: from, headers: { accept: '*/*' } }, (r) => {
    // An event stream that opened is not read to its end (it has none): its status is the answer.
    if (String(r.headers['content-type']).startsWith('text/event-stream')) { req.destroy(); ok({ status: r.statusCode ?? 0, headers: r.headers, body: '' }); return }
    let body = ''
    r.setEncoding('utf8')
    r.on('data', (c: string) => { body += c })
    r.on('end', () => ok({ status: r.statusCode ?? 0, headers: r.headers, body }))
  })
  req.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'ECONNRESET') fail(err) })
})

t.test('LIVE_PAGE_RATE_LIMIT_PER_MINUTE: 120 by default, 0 turns it off', async (t) => {
  t.equal(loadConfig({}).livePageRateLimitPerMinute, 120)
  t.equal(loadConfig({ LIVE_PAGE_RATE_LIMIT_PER_MINUTE: '0' }).livePageRateLimitPerMinute, 0)
})

t.test('/live/routes/*: a budget per client address, 429 with Retry-After beyond it; another address has its own', async (t) => {
  const h = await build(t, { livePageRateLimitPerMinute: 5, sseHeartbeatMs: 60_000 })
  const w = await progressWorld(h)
  const route = await w.route({ tasks: [], publish: true })
  const path = new URL((await h.call('POST', `/api/v1/routes/${route}/live-links`, { token: w.carrier.token, body: {} })).json().url).pathname
  const base = await listen(h.app)

  const statuses = []
  // The page, its data and a link that opens nothing share one budget.
  for (const p of [path, `${path}/data`, path, '/live/routes/1.2.not-a-token', `${path}/data`, path, `${path}/data`]) statuses.push((await get(base, p)).status)
  t.same(statuses, [200, 200, 200, 404, 200, 429, 429], 'five a minute from one address')
  const limited = await get(base, `${path}/stream`)
  t.equal(limited.status, 429, 'the stream too')
  t.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After')
  t.same(JSON.parse(limited.body), { message: 'Too many requests from this address; retry after the time in Retry-After.', code: 'rate_limited' })
  t.equal((await get(base, '/live/assets/leaflet.css')).status, 429, 'and the assets')
  t.equal((await get(base, path, '127.0.0.2')).status, 200, 'another address is answered')
  t.equal((await h.call('GET', `/api/v1/routes/${route}/progress`, { token: w.carrier.token })).statusCode, 200, 'the API itself is not under this budget')
})

t.test('an IPv6 client counts by its /64, an IPv4-mapped address as its IPv4 (inject: no IPv6 here)', async (t) => {
  const h = await build(t, { livePageRateLimitPerMinute: 2, trackingRateLimitPerMinute: 2 })
  const at = (url: string, remoteAddress: string) => h.app.inject({ method: 'GET', url, remoteAddress }).then((r) => r.statusCode)
  for (const page of ['/live/routes/1.2.x', '/track/x']) {
    t.same([await at(page, '2001:db8:1:2::1'), await at(page, '2001:db8:1:2:ffff::9'), await at(page, '2001:db8:1:2::a')], [404, 404, 429], `${page}: one /64, one budget`)
    t.equal(await at(page, '2001:db8:1:3::1'), 404, `${page}: the next /64 has its own`)
    t.same([await at(page, '::ffff:192.0.2.7'), await at(page, '192.0.2.7'), await at(page, '192.0.2.7')], [404, 404, 429], `${page}: ::ffff:192.0.2.7 is 192.0.2.7`)
  }
})
