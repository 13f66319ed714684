// The shipped nginx (infra/proxy/nginx.conf) in front of a listening API: what its access log writes.
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { linkTokens } from '../helpers/link-tokens.js'
import t from 'tap'
import { build } from '../helpers/build.js'
import { startNginx } from '../helpers/nginx.js'
import { LINK_PAGE_PATTERN } from '../../src/http/log-redaction.js'
import { listen, openSse, progressWorld } from '../routes/progress/fixtures.js'

/** A GET with the path exactly as written in the request line (a URL string would lose its dot segments). */
const get = (port: number, path: string, headers: Record<string, string> = {}) => new Promise<number>((ok, fail) => {
  http.get({ host: '127.0.0.1', port, path, headers }, (r) => { r.resume(); r.on('end', () => ok(r.statusCode ?? 0)) }).on('error', fail)
})

async function logLines(file: string, atLeast: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean)
    if (lines.length >= atLeast) return lines
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`fewer than ${atLeast} lines in ${file}`)
}

t.test('the shipped nginx access log writes no tracking or live-link token, however the path is spelled (issue 31)', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000, trustProxy: ['127.0.0.1'] })
  const w = await progressWorld(h)
  const { live, track } = await linkTokens(h, w)
  const apiPort = Number(new URL(await listen(h.app)).port)
  const nginx = await startNginx(t, apiPort)

  const cases: Array<[string, number, Record<string, string>?]> = [
    [`/track/${track}`, 200],
    [`/track/${track}/data`, 200],
    [`/%74rack/${track}/data`, 200],
    [`/tr%61ck/${track}`, 200],
    [`/%6cive/routes/${live}/data`, 200],
    [`/live/%72outes/${live}`, 200],
    [`/Live/Routes/${live}/data`, 404],
    [`/live%2Froutes/${live}/data`, 404],
    [`/track//${track}/data`, 404],
    [`/track/./${track}/data`, 404],
    [`/track/%2e%2e/track/${track}`, 404],
    [`/%2574rack/${track}/data`, 404],
    [`/api/v1/no-such-route?next=/track/${track}`, 404],
    [`/api/v1/no-such-route?next=%2Flive%2Froutes%2F${live}`, 404],
    [`/api/v1/organizations/my?access_token=${w.carrier.token}&page=1`, 401],
    [`/api/v1/organizations/my?page=1&API%5FKEY=${w.carrier.token}`, 401],
    ['/health', 200, { referer: `https://shipping.example/%74rack/${track}` }],
  ]
  for (const [path, status, headers] of cases) {
    t.equal(await get(nginx.port, path, headers), status, path.replace(track, '<tracking token>').replace(live, '<live token>').replace(w.carrier.token, '<api token>'))
  }
  // A stream's line is written when it ends.
  const stream = await openSse(`http://127.0.0.1:${nginx.port}/tr%61ck/${track}/stream`)
  t.equal(stream.status, 200)
  await stream.until((e) => e.some((x) => x.event === 'tracking'))
  stream.close()

  const lines = await logLines(nginx.accessLog, cases.length + 1)
  const log = lines.join('\n')
  for (const [secret, name] of [[track, 'tracking token'], [track.split('.')[1]!, 'its signature'], [live, 'live token'], [live.split('.')[2]!, 'its signature'], [w.carrier.token, 'API token']] as const) {
    t.notOk(log.includes(secret), `no ${name} in the access log`)
  }
  // Still a useful line: which page, its status, the method and the protocol.
  t.match(log, /"GET \/%74rack\/\[REDACTED\]\/data HTTP\/1\.1" 200 /)
  t.match(log, /"GET \/%6cive\/routes\/\[REDACTED\]\/data HTTP\/1\.1" 200 /)
  t.match(log, /"GET \/track\/\[REDACTED\] HTTP\/1\.1" 200 /)
  t.match(log, /"GET \/tr%61ck\/\[REDACTED\]\/stream HTTP\/1\.1" 200 /)
  t.match(log, /"GET \[REDACTED\] HTTP\/1\.1" 404 /, 'a page named in a query value: nothing of the address')
  t.match(log, /"GET \/api\/v1\/organizations\/my\?\[REDACTED\] HTTP\/1\.1" 401 /, 'a credential in the query string')
  t.match(log, /"GET \/health HTTP\/1\.1" 200 \d+ "\[REDACTED\]"/, 'a referer naming a page')
  t.equal(lines.length, cases.length + 1, 'one line per request')
})

t.test('nginx and the API redact the same spellings: the shipped map uses LINK_PAGE_PATTERN as it is', async (t) => {
  const conf = readFileSync('infra/proxy/nginx.conf', 'utf8')
  t.equal(conf.split(LINK_PAGE_PATTERN).length - 1, 3, 'the request URI\'s two rules and the referer\'s')
  const format = /^\s*log_format redacted ([^;]+);/m.exec(conf)?.[1] ?? ''
  t.match(format, /\$loggable_request_uri/)
  t.notMatch(format, /\$request\b|\$request_uri|\$uri|\$args|\$query_string|\$http_referer|\$remote_user/, 'nothing logged but through the maps; no Basic username')
  t.match(conf, /^\s*access_log \S+ redacted;/m)
})
