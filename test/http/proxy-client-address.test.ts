// The client's address behind the shipped nginx (infra/proxy/nginx.conf): what per-address limits count.
import http from 'node:http'
import t from 'tap'
import { build } from '../helpers/build.js'
import { startNginx } from '../helpers/nginx.js'
import { listen } from '../routes/progress/fixtures.js'

const get = (port: number, path: string, headers: Record<string, string>) => new Promise<{ status: number; retryAfter: string | undefined }>((ok, fail) => {
  http.get({ host: '127.0.0.1', port, path, headers }, (r) => {
    r.resume()
    r.on('end', () => ok({ status: r.statusCode ?? 0, retryAfter: r.headers['retry-after'] }))
  }).on('error', fail)
})

t.test('through the shipped nginx, a client naming its own X-Forwarded-For is still limited by its real address (issue 31)', async (t) => {
  // The API trusts the proxy (loopback here), as compose trusts nginx's address: the address nginx
  // saw must be the one counted, not whatever the client wrote into the header nginx forwards.
  const h = await build(t, { trustProxy: ['127.0.0.1'], trackingRateLimitPerMinute: 5 })
  const nginx = await startNginx(t, Number(new URL(await listen(h.app)).port))
  const answers = []
  for (let i = 1; i <= 8; i++) answers.push(await get(nginx.port, '/track/not-a-token', { 'x-forwarded-for': `203.0.113.${i}` }))
  t.same(answers.map((a) => a.status), [404, 404, 404, 404, 404, 429, 429, 429], 'five a minute, whatever the header says')
  t.ok(Number(answers[5]!.retryAfter) > 0, 'with Retry-After')
})
