import http from 'node:http'
import t from 'tap'
import { build } from '../helpers/build.js'
import { startNginx } from '../helpers/nginx.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { listen, openSse, progressWorld } from '../routes/progress/fixtures.js'

/** GET over real HTTP with any Host header (fetch will not send one of our choosing). */
const get = (url: string, headers: Record<string, string> = {}) => new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((ok, fail) => {
  http.get(url, { headers }, (res) => {
    let body = ''
    res.setEncoding('utf8')
    res.on('data', (c: string) => { body += c })
    res.on('end', () => ok({ status: res.statusCode ?? 0, body, headers: res.headers }))
  }).on('error', fail)
})

t.test('TRUST_PROXY: addresses and CIDR ranges; anything else named at start', async (t) => {
  t.same(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).trustProxy, ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8'])
  t.same(loadConfig({}).trustProxy, [], 'none by default')
  for (const bad of ['nginx', '300.1.1.1', '10.0.0.0/33', '10.0.0.0/8/1', '::1/129', '*', 'true']) {
    t.throws(() => loadConfig({ TRUST_PROXY: bad }), ConfigError, bad)
    try { loadConfig({ TRUST_PROXY: bad }) } catch (e) { t.match((e as Error).message, /TRUST_PROXY must be IP addresses or CIDR ranges/) }
  }
  t.equal(loadConfig({ MAP_TILE_URL: 'https://tile.openstreetmap.org/{z}/{x}/{y}.png' }).mapTileUrl, 'https://tile.openstreetmap.org/{z}/{x}/{y}.png')
  for (const bad of ['https://tile.example.org/tiles.png', 'javascript:alert(1)//{z}/{x}/{y}', 'ftp://x/{z}/{x}/{y}']) {
    t.throws(() => loadConfig({ MAP_TILE_URL: bad }), ConfigError, bad)
  }
})

t.test('live links through the repository\'s nginx: trusted, they point at the proxy; untrusted X-Forwarded-* are ignored', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000, trustProxy: ['127.0.0.1'] })
  const base = await listen(h.app)
  const apiPort = Number(new URL(base).port)
  const w = await progressWorld(h)
  const [a] = await w.tasks(1)
  const id = await w.route({ tasks: [a!], publish: true })
  const { port: proxyPort } = await startNginx(t, apiPort)
  const front = `shipping.test:${proxyPort}`
  const auth = { authorization: `Bearer ${w.carrier.token}`, 'content-type': 'application/json', accept: 'application/json' }

  const viaProxy = await new Promise<{ status: number; body: string }>((ok, fail) => {
    const req = http.request(`http://127.0.0.1:${proxyPort}/api/v1/routes/${id}/live-links`, {
      method: 'POST', headers: { ...auth, host: front, 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'gopher' },
    }, (res) => { let b = ''; res.on('data', (c) => { b += c }); res.on('end', () => ok({ status: res.statusCode ?? 0, body: b })) })
    req.on('error', fail)
    req.end('{}')
  })
  t.equal(viaProxy.status, 201, viaProxy.body)
  const url = JSON.parse(viaProxy.body).url as string
  t.match(url, new RegExp(`^http://shipping\\.test:${proxyPort}/live/routes/\\d+\\.\\d+\\.[\\w-]{43}$`), 'the proxy\'s scheme, host and port; the client\'s own X-Forwarded-* overwritten by nginx')

  // The link works through the proxy: the page, its data and its stream (unbuffered).
  const path = new URL(url).pathname
  const page = await get(`http://127.0.0.1:${proxyPort}${path}`, { host: front })
  t.equal(page.status, 200)
  t.equal(page.headers['referrer-policy'], 'no-referrer')
  t.equal((await get(`http://127.0.0.1:${proxyPort}${path}/data`, { host: front })).status, 200)
  const stream = await openSse(`http://127.0.0.1:${proxyPort}${path}/stream`, { host: front })
  t.equal(stream.status, 200)
  await stream.until((e) => e.some((x) => x.event === 'snapshot'))
  t.equal((await w.transition(a!, 'start')).statusCode, 200)
  await stream.until((e) => e.some((x) => x.event === 'task.started'), 5000)
  t.pass('a change comes through nginx as it happens')
  stream.close()

  // Straight to the API from an address not in TRUST_PROXY's list (the loopback is, so a second app trusting only 10/8).
  const h2 = await build(t, { trustProxy: ['10.0.0.0/8'] })
  const base2 = await listen(h2.app)
  const w2 = await progressWorld(h2)
  const id2 = await w2.route({ tasks: [], publish: false })
  for (const app of [{ base: base2, token: w2.carrier.token, id: id2 }]) {
    const r = await fetch(`${app.base}/api/v1/routes/${app.id}/live-links`, {
      method: 'POST', body: '{}', headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    })
    t.equal(r.status, 201)
    t.match((await r.json() as { url: string }).url, new RegExp(`^${app.base}/live/routes/`), 'an untrusted sender\'s X-Forwarded-* change nothing')
  }
})

t.test('PUBLIC_BASE_URL starts every handed-out link, whatever the request says', async (t) => {
  const h = await build(t, { publicBaseUrl: 'https://routes.example.com/shipping', trustProxy: ['127.0.0.1'] })
  const w = await progressWorld(h)
  const id = await w.route({ tasks: [], publish: false })
  const headers = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', host: 'internal:3000' }
  const link = await h.app.inject({ method: 'POST', url: `/api/v1/routes/${id}/live-links`, payload: {}, headers: { ...headers, authorization: `Bearer ${w.carrier.token}` } })
  t.equal(link.statusCode, 201)
  t.match(JSON.parse(link.body).url, /^https:\/\/routes\.example\.com\/shipping\/live\/routes\//)
  const list = await h.app.inject({ method: 'GET', url: '/api/v1/routes?perPage=1', headers: { ...headers, authorization: `Bearer ${w.carrier.token}` } })
  t.equal(list.statusCode, 200, list.body)
  t.match(JSON.parse(list.body).routes.links.first, /^https:\/\/routes\.example\.com\/shipping\/api\/v1\/routes\?/, 'pagination links too')
})
