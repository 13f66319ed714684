import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import { build } from '../../helpers/build.js'
import { listen, openSse, progressWorld } from '../../routes/progress/fixtures.js'

const APP = 'https://app.example.com'
const preflight = (origin: string, method = 'POST') => ({
  origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, idempotency-key',
})
const corsHeaders = (headers: Record<string, unknown>) => Object.keys(headers).filter((h) => h.startsWith('access-control-'))

t.test('CORS_ORIGINS set: an allowed origin is answered, any other is not; a preflight is never a 404', async (t) => {
  const h = await build(t, {}, { CORS_ORIGINS: `${APP}, http://localhost:5173` })
  const org = await h.createOrganization()

  t.test('a preflight from an allowed origin: 204 with the allow headers, before authentication', async (t) => {
    const res = await h.app.inject({ method: 'OPTIONS', url: '/api/v1/shipments', headers: preflight(APP) })
    t.equal(res.statusCode, 204)
    t.equal(res.headers['access-control-allow-origin'], APP)
    t.match(res.headers['access-control-allow-methods'], /POST/)
    t.match(res.headers['access-control-allow-headers'], /authorization/)
    t.equal(res.headers['access-control-max-age'], '600')
    t.notOk(res.headers['access-control-allow-credentials'], 'bearer tokens, no cookies')
    const other = await h.app.inject({ method: 'OPTIONS', url: '/api/v1/shipments/1/documents', headers: preflight('http://localhost:5173', 'DELETE') })
    t.equal(other.statusCode, 204, 'the second configured origin too')
    t.equal(other.headers['access-control-allow-origin'], 'http://localhost:5173')
  })

  t.test('a preflight from another origin: 204 without any allow header', async (t) => {
    for (const origin of ['https://evil.example.com', 'http://app.example.com', 'https://app.example.com.evil.net']) {
      const res = await h.app.inject({ method: 'OPTIONS', url: '/api/v1/shipments', headers: preflight(origin) })
      t.equal(res.statusCode, 204, origin)
      t.same(corsHeaders(res.headers), [], `${origin}: no access-control-* header`)
    }
  })

  t.test('a preflight for a path with no route is not a 404 either', async (t) => {
    const res = await h.app.inject({ method: 'OPTIONS', url: '/api/v1/no-such-thing', headers: preflight(APP) })
    t.equal(res.statusCode, 204)
    t.equal(res.headers['access-control-allow-origin'], APP)
  })

  t.test('answers carry the allow header for the allowed origin (errors too) and expose the API\'s headers', async (t) => {
    const ok = await h.call('GET', '/api/v1/organizations/my', { token: org.token, headers: { origin: APP } })
    t.equal(ok.statusCode, 200)
    t.equal(ok.headers['access-control-allow-origin'], APP)
    t.match(ok.headers['access-control-expose-headers'], /x-request-id/)
    t.match(ok.headers.vary, /Origin/i, 'caches keep answers per origin')
    const denied = await h.call('GET', '/api/v1/organizations/my', { token: 'wrong', headers: { origin: APP } })
    t.equal(denied.statusCode, 401)
    t.equal(denied.headers['access-control-allow-origin'], APP, 'a browser app can read the error')
    const stranger = await h.call('GET', '/api/v1/organizations/my', { token: org.token, headers: { origin: 'https://evil.example.com' } })
    t.equal(stranger.statusCode, 200, 'served (CORS is the browser\'s check, not authentication)')
    t.notOk(stranger.headers['access-control-allow-origin'], 'but not readable by a page of another origin')
  })

  t.test('a route\'s progress stream (hijacked reply) carries the allow header too', async (t) => {
    const base = await listen(h.app)
    const w = await progressWorld(h)
    const id = await w.route({ tasks: await w.tasks(1), publish: true })
    const s = await openSse(`${base}/api/v1/routes/${id}/progress/stream`, { authorization: `Bearer ${w.carrier.token}`, origin: APP })
    t.teardown(() => s.close())
    t.equal(s.status, 200)
    t.equal(s.headers['access-control-allow-origin'], APP)
    await s.until((e) => e.some((x) => x.event === 'snapshot'))
  })
})

t.test('CORS_ORIGINS unset (the default): no CORS header at all, and a preflight is 204, not 404', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization()
  const res = await h.call('GET', '/api/v1/organizations/my', { token: org.token, headers: { origin: APP } })
  t.equal(res.statusCode, 200)
  t.same(corsHeaders(res.headers), [])
  const pre = await h.app.inject({ method: 'OPTIONS', url: '/api/v1/shipments', headers: preflight(APP) })
  t.equal(pre.statusCode, 204)
  t.same(corsHeaders(pre.headers), [])
})

t.test('CORS_ORIGINS=*: any origin', async (t) => {
  const h = await build(t, {}, { CORS_ORIGINS: '*' })
  const pre = await h.app.inject({ method: 'OPTIONS', url: '/api/v1/shipments', headers: preflight('https://anyone.example') })
  t.equal(pre.statusCode, 204)
  t.equal(pre.headers['access-control-allow-origin'], '*')
})

t.test('in Chromium: a browser app on another origin calls the API with its token when configured, and is refused when not', async (t) => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  t.teardown(() => browser.close())
  // The app's page comes from a server of its own on another port (another origin; a real loopback
  // server, so Chromium's local-network rules see loopback calling loopback).
  const pageServer = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>') })
  await new Promise<void>((done) => pageServer.listen(0, '127.0.0.1', done))
  t.teardown(() => new Promise((done) => pageServer.close(done)))
  const DEV = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`
  const appPage = async (api: string, token: string) => {
    const context = await browser.newContext()
    t.teardown(() => context.close())
    const page = await context.newPage()
    await page.goto(`${DEV}/`)
    return page.evaluate(async ({ api, token }): Promise<{ status?: number; id?: string | undefined; requestId?: string | null; error?: string }> => {
      try {
        const res = await fetch(`${api}/api/v1/organizations/my`, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } })
        return { status: res.status, id: ((await res.json()) as { organization?: { id: string } }).organization?.id, requestId: res.headers.get('x-request-id') }
      } catch (err) {
        return { error: String(err) }
      }
    }, { api, token })
  }

  const allowed = await build(t, {}, { CORS_ORIGINS: DEV })
  const org = await allowed.createOrganization()
  const answer = await appPage(await listen(allowed.app), org.token)
  t.equal(answer.status, 200, `the call went through the preflight and was answered: ${JSON.stringify(answer)}`)
  t.equal(answer.id, org.id)
  t.ok(answer.requestId, 'an exposed header is readable')

  const closed = await build(t)
  const other = await closed.createOrganization()
  const refused = await appPage(await listen(closed.app), other.token)
  t.match(refused.error, /Failed to fetch/, 'without CORS_ORIGINS the browser refuses the answer')
})
