import { linkTokens } from '../helpers/link-tokens.js'
import t from 'tap'
import http from 'node:http'
import { Writable } from 'node:stream'
import { build } from '../helpers/build.js'
import type { HttpModule } from '../../src/http/module.js'
import { listen, progressWorld } from '../routes/progress/fixtures.js'
import { isSecretParam, redactPathSecrets, redactQuerySecrets } from '../../src/http/log-redaction.js'

const testRoutes: HttpModule = {
  name: 'log-redaction-test',
  async routes(app) {
    app.get('/test/boom', async (req) => { throw new Error(`failed while serving ${req.url}`) })
    app.get('/test/headers', async (req) => { req.log.info({ headers: req.headers }, 'headers seen'); return {} })
  },
}

t.test('secrets in the query string or the Authorization header never reach a log line', async (t) => {
  let text = ''
  const stream = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb() } })
  const h = await build(t, {}, {}, { logger: { level: 'debug', stream }, extraModules: [testRoutes] })
  const org = await h.createOrganization()
  const secrets: string[] = [org.token]
  const s = (n: number) => { const v = `sekret${n}x${Math.random().toString(36).slice(2, 8)}`; secrets.push(v); return v }

  const cases: Array<[string, number, string | undefined]> = [
    // A valid route, with parameters that stay next to the redacted ones.
    [`/api/v1/organizations/my?access_token=${s(1)}&keep=one`, 200, org.token],
    // Names in any case, percent-encoded, with '-' for '_', and a URL inside a parameter.
    [`/api/v1/organizations/my?API%5FKEY=${s(2)}&Client-Secret=${s(3)}&HMAC_SECRET=${s(4)}&next=/x?token=${s(5)}&keep=two`, 200, org.token],
    // Unknown route: the 404.
    [`/api/v1/no-such-route?token=${s(6)}&keep=three`, 404, org.token],
    // Refused before routing (the frameworkErrors path).
    [`/api/v1/shipments/%zz?password=${s(7)}&keep=four`, 400, org.token],
    // A 500 whose error message quotes the URL.
    [`/api/v1/test/boom?signature=${s(8)}&refresh_token=${s(9)}&keep=five`, 500, org.token],
    // Unauthenticated.
    [`/api/v1/organizations/my?apikey=${s(10)}&keep=six`, 401, undefined],
    // A handler that logs the headers.
    [`/api/v1/test/headers?key=${s(11)}&keep=seven`, 200, org.token],
  ]
  for (const [url, status, token] of cases) {
    const res = await h.call('GET', url, { token, headers: { cookie: `session=${s(12)}` } })
    t.equal(res.statusCode, status, url.slice(0, url.indexOf('?')))
  }

  const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
  for (const secret of secrets) t.notOk(text.includes(secret), `${secret.slice(0, 8)}… is in no log line`)
  t.match(text, /\[REDACTED\]/)

  for (const keep of ['one', 'two', 'three', 'four', 'five', 'six', 'seven']) {
    // A URL refused before routing gets no completion line from Fastify (its frameworkErrors path).
    if (keep !== 'four') {
      const done = lines.find((l) => l.msg === 'request completed' && l.url.includes(`keep=${keep}`))
      t.match(done?.url, /=\[REDACTED\]/, `the completion line shows where a secret was (${keep})`)
    }
    const incoming = lines.find((l) => l.msg === 'incoming request' && l.req?.url?.includes(`keep=${keep}`))
    t.match(incoming?.req?.url, /=\[REDACTED\]/, `the debug arrival line too (${keep})`)
  }
  const second = lines.find((l) => l.msg === 'request completed' && l.url.includes('keep=two'))
  t.equal(second?.url, '/api/v1/organizations/my?API%5FKEY=[REDACTED]&Client-Secret=[REDACTED]&HMAC_SECRET=[REDACTED]&next=/x?token=[REDACTED]&keep=two')
  t.match(lines.find((l) => l.msg === 'unhandled error')?.err?.message, /signature=\[REDACTED\]&refresh_token=\[REDACTED\]&keep=five/, 'an error message quoting the URL')
  t.match(lines.find((l) => l.msg === 'headers seen')?.headers, { authorization: '[REDACTED]', cookie: '[REDACTED]' }, 'headers a handler logs')

  // A URL without a query string is written as it is.
  await h.call('GET', '/api/v1/organizations/my', { token: org.token })
  t.ok(text.split('\n').some((l) => l.includes('"url":"/api/v1/organizations/my"')))
})

t.test('which names are secret', async (t) => {
  for (const n of ['access_token', 'ACCESS_TOKEN', 'api_key', 'Api-Key', 'apikey', 'token', 'key', 'secret', 'password', 'hmac_secret', 'signature', 'client_secret', 'webhook_secret', 'x-api-key', 'access%5Ftoken', 'token[]']) {
    t.ok(isSecretParam(n), n)
  }
  for (const n of ['cursor', 'page', 'limit', 'status', 'as_of', 'updated_since', 'external_reference', 'sort', 'format', 'keys', 'tokens', 'monkey']) {
    t.notOk(isSecretParam(n), n)
  }
  t.equal(redactQuerySecrets('{"msg":"no query here"}'), '{"msg":"no query here"}')
  t.equal(redactQuerySecrets('{"url":"/a?token=ab\\"cd&b=1"}'), '{"url":"/a?token=[REDACTED]&b=1"}', 'a JSON-escaped quote stays inside the value')
})

t.test('the token of a tracking link or a live link is in no log line (issue 24)', async (t) => {
  let text = ''
  const stream = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb() } })
  const h = await build(t, {}, {}, { logger: { level: 'debug', stream } })
  const org = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(org.id, shipper.id)
  const address = { name: 'A', street: 'S', street_number: '1', city: 'Rosario', state: 'Santa Fe', country: 'AR' }
  const shipment = (await h.call('POST', '/api/v1/shipments', { token: shipper.token, body: { carrier_id: org.id, is_public: true, origin: address, destination: address, packages: [{ grams: 1, length: 1, width: 1, height: 1 }] } })).json().shipment
  const token = new URL(shipment.public_tracking_url).pathname.split('/').pop()!
  const live = `1.${Math.floor(Date.now() / 1000) + 600}.${'A'.repeat(43)}`
  const paths = [`/track/${token}`, `/track/${token}/data`, `/track/${token}/stream?x=1`, `/track/${token}x`, `/live/routes/${live}`, `/live/routes/${live}/stream`]
  for (const p of paths) await h.app.inject({ method: 'GET', url: p, headers: { 'last-event-id': 'bad id' } })
  t.notOk(text.includes(token), 'no tracking token')
  t.notOk(text.includes(token.split('.')[1]!), 'not even its signature')
  t.notOk(text.includes('A'.repeat(43)), 'no live-link token')
  const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const urls = lines.filter((l) => l.msg === 'request completed').map((l) => l.url)
  t.ok(urls.includes('/track/[REDACTED]/data') && urls.includes('/live/routes/[REDACTED]'), urls.join(' '))
  t.equal(redactPathSecrets('{"url":"/track/01ABC.def/stream"}'), '{"url":"/track/[REDACTED]/stream"}')
  t.equal(redactPathSecrets('{"url":"/tracking/x"}'), '{"url":"/tracking/x"}', 'another path is left alone')
  t.equal(redactPathSecrets('GET /live/routes/1.2.abc?x=1 done'), 'GET /live/routes/[REDACTED]?x=1 done')
  t.equal(redactPathSecrets('{"url":"/track/%2E%2E/track/01ABC.def"}'), '{"url":"/track/%2E%2E/[REDACTED]"}', 'a dot segment cannot move the token out of what is redacted')
  t.equal(redactPathSecrets('{"url":"/Live/./Routes//1.2.abc/stream/"}'), '{"url":"/Live/./Routes//[REDACTED]/stream/"}')
  t.equal(redactPathSecrets('{"url":"/x?next=%2Ftrack%2F01ABC.def&y=1"}'), '{"url":"/x?next=%2Ftrack%2F[REDACTED]"}', 'an encoded path in a query value (to its end: the path stops at no `&`)')
  t.equal(redactPathSecrets('{"url":"/api/v1/shipments/1/tracking","msg":"live"}'), '{"url":"/api/v1/shipments/1/tracking","msg":"live"}')
})

t.test('a link token is in no log line however the path is spelled (issue 31): through a listening server', async (t) => {
  let text = ''
  const stream = new Writable({ write(chunk, _enc, cb) { text += String(chunk); cb() } })
  const h = await build(t, { sseHeartbeatMs: 60_000 }, {}, { logger: { level: 'debug', stream } })
  const w = await progressWorld(h)
  const { live, track } = await linkTokens(h, w)
  const base = await listen(h.app)

  // Spellings the router decodes to a tracking or live path (200), and ones it does not (404) but
  // that still carry the token: each must leave no trace of it.
  const cases: Array<[string, number]> = [
    [`/%74rack/${track}/data`, 200],
    [`/%54rack/${track}/data`, 404],
    [`/tr%61ck/${track}`, 200],
    [`/%6cive/routes/${live}/data`, 200],
    [`/live/%72outes/${live}/data`, 200],
    [`/live%2froutes/${live}/data`, 404],
    [`/track//${track}/data`, 404],
    [`//track/${track}/data`, 404],
    [`/track/./${track}/data`, 404],
    [`/track/%2e%2e/track/${track}`, 404],
    [`/TRACK/${track}/data`, 404],
    [`/x/../live/routes/${live}`, 404],
    [`/%2574rack/${track}/data`, 404],
  ]
  for (const [path, status] of cases) {
    // The path as written, in the request line (a URL string, fetch's or node:http's, would lose its dot segments).
    const res = await new Promise<number>((ok, fail) => {
      http.get({ host: '127.0.0.1', port: new URL(base).port, path, headers: { 'last-event-id': 'not an id' } }, (r) => { r.resume(); r.on('end', () => ok(r.statusCode ?? 0)) }).on('error', fail)
    })
    t.equal(res, status, path.replace(track, '<tracking token>').replace(live, '<live token>'))
  }
  await h.app.close()
  for (const [secret, name] of [[track, 'tracking token'], [track.split('.')[1]!, 'its signature'], [live, 'live token'], [live.split('.')[2]!, 'its signature']] as const) {
    t.notOk(text.includes(secret), `no ${name} in the log`)
  }
  const urls = text.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.msg === 'request completed').map((l) => String(l.url))
  t.ok(urls.includes('/%74rack/[REDACTED]/data') && urls.includes('/%6cive/routes/[REDACTED]/data'), `the line still says which page was asked for: ${urls.join(' ')}`)
})
