import t from 'tap'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { closeIdleConnections, postJson, DEFAULT_MAX_BODY_BYTES } from '../../src/notifications/safe-http.js'
import { validateCallbackUrl, type HostLookup } from '../../src/notifications/url-safety.js'

// Slack for a loaded CI machine; a missing deadline would overshoot by seconds, not this.
const MARGIN_MS = 250

interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

async function receiver(t: { teardown(fn: () => void): void }, respond: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = []
  let connections = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
      respond(req, res, body)
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.closeAllConnections()
    server.close()
    closeIdleConnections()
  })
  const port = (server.address() as AddressInfo).port
  return { port, seen, connections: () => connections }
}

const ok = (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/plain' })
  res.end('thanks')
}

t.test('posts to a local receiver and reports status, body and latency', async (t) => {
  const rx = await receiver(t, ok)
  const body = JSON.stringify({ event: 'new', shipment_id: 7 })
  const result = await postJson(`http://127.0.0.1:${rx.port}/hooks?x=1`, body, { 'webhook-id': 'ntf_1' }, { timeoutMs: 2000, allowPrivate: true })
  t.equal(result.status, 200)
  t.equal(result.body, 'thanks')
  t.equal(result.error, undefined)
  t.ok(result.latencyMs > 0 && result.latencyMs < 2000, `latency ${result.latencyMs} ms`)
  t.equal(rx.seen.length, 1)
  t.equal(rx.seen[0]!.method, 'POST')
  t.equal(rx.seen[0]!.url, '/hooks?x=1')
  t.equal(rx.seen[0]!.body, body)
  t.equal(rx.seen[0]!.headers['content-type'], 'application/json')
  t.equal(rx.seen[0]!.headers['webhook-id'], 'ntf_1')
  t.equal(rx.seen[0]!.headers['content-length'], String(Buffer.byteLength(body)))
})

t.test('non-2xx answers come back with their status and body', async (t) => {
  const rx = await receiver(t, (_req, res) => {
    res.writeHead(503)
    res.end('busy')
  })
  const result = await postJson(`http://127.0.0.1:${rx.port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: true })
  t.same({ status: result.status, body: result.body, error: result.error }, { status: 503, body: 'busy', error: undefined })
})

t.test('connects only to the address validated at send time, keeping the host name', async (t) => {
  const rx = await receiver(t, ok)
  let calls = 0
  const lookup: HostLookup = async (host) => {
    calls++
    t.equal(host, 'receiver.test')
    return ['127.0.0.1']
  }
  // receiver.test exists in no DNS: reaching the server proves the pinned address was used.
  const result = await postJson(`http://receiver.test:${rx.port}/h`, '{}', {}, { timeoutMs: 2000, allowPrivate: true, lookup })
  t.equal(result.status, 200)
  t.equal(calls, 1, 'resolved once, by the check, not again by the socket')
  t.equal(rx.seen[0]!.headers.host, `receiver.test:${rx.port}`)
})

t.test('DNS rebinding: public at save time, loopback at send time, refused at send time', async (t) => {
  const rx = await receiver(t, ok)
  let calls = 0
  const lookup: HostLookup = async () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1'])
  const url = `http://rebind.test:${rx.port}/hook`
  const saved = await validateCallbackUrl(url, { allowPrivate: false, lookup })
  t.equal(saved.ok, true, 'accepted when saved')
  const result = await postJson(url, '{}', {}, { timeoutMs: 2000, allowPrivate: false, lookup })
  t.equal(result.status, 0)
  t.match(result.error, /^refused: address 127\.0\.0\.1 is loopback/)
  t.equal(rx.seen.length, 0, 'nothing reached the loopback receiver')
  t.equal(rx.connections(), 0)
})

t.test('a record set with one private address is refused even next to public ones', async (t) => {
  const rx = await receiver(t, ok)
  const lookup: HostLookup = async () => ['93.184.216.34', '127.0.0.1']
  const result = await postJson(`http://mixed.test:${rx.port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: false, lookup })
  t.equal(result.status, 0)
  t.match(result.error, /refused/)
  t.equal(rx.connections(), 0)
})

t.test('literal private targets and bad URLs are refused without a connection', async (t) => {
  const rx = await receiver(t, ok)
  for (const url of [`http://127.0.0.1:${rx.port}/`, `http://[::ffff:127.0.0.1]:${rx.port}/`, 'ftp://x/', 'not a url']) {
    const result = await postJson(url, '{}', {}, { timeoutMs: 1000, allowPrivate: false })
    t.equal(result.status, 0, url)
    t.match(result.error, /^refused: /)
  }
  t.equal(rx.connections(), 0)
})

t.test('a hanging receiver ends with status 0 and a timeout within the limit', async (t) => {
  const rx = await receiver(t, () => {
    /* never answers */
  })
  const started = Date.now()
  const result = await postJson(`http://127.0.0.1:${rx.port}/`, '{}', {}, { timeoutMs: 300, allowPrivate: true })
  const took = Date.now() - started
  t.equal(result.status, 0)
  t.equal(result.error, 'timeout after 300 ms')
  t.ok(took >= 290 && took < 300 + MARGIN_MS, `took ${took} ms`)
  t.ok(result.latencyMs >= 290 && result.latencyMs < 300 + MARGIN_MS)
})

t.test('a receiver that sends headers and then stalls the body also times out', async (t) => {
  const rx = await receiver(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '100' })
    res.write('partial')
  })
  const started = Date.now()
  const result = await postJson(`http://127.0.0.1:${rx.port}/`, '{}', {}, { timeoutMs: 300, allowPrivate: true })
  t.equal(result.status, 0)
  t.equal(result.error, 'timeout after 300 ms')
  t.ok(Date.now() - started < 300 + MARGIN_MS)
})

t.test('a resolver that never answers is cut by the same deadline', async (t) => {
  const lookup: HostLookup = () => new Promise(() => {})
  const started = Date.now()
  const result = await postJson('http://slow-dns.test/', '{}', {}, { timeoutMs: 200, allowPrivate: true, lookup })
  t.equal(result.status, 0)
  t.equal(result.error, 'timeout after 200 ms')
  t.ok(Date.now() - started < 200 + MARGIN_MS)
})

t.test('the caller can abort', async (t) => {
  const rx = await receiver(t, () => {})
  const controller = new AbortController()
  setTimeout(() => controller.abort(), 50)
  const result = await postJson(`http://127.0.0.1:${rx.port}/`, '{}', {}, { timeoutMs: 5000, allowPrivate: true, signal: controller.signal })
  t.equal(result.status, 0)
  t.equal(result.error, 'aborted')
  t.ok(result.latencyMs < 1000)
})

t.test('network errors resolve to status 0 with the error', async (t) => {
  const probe = net.createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const port = (probe.address() as AddressInfo).port
  await new Promise((resolve) => probe.close(resolve))
  const result = await postJson(`http://127.0.0.1:${port}/`, '{}', {}, { timeoutMs: 1000, allowPrivate: true })
  t.equal(result.status, 0)
  t.match(result.error, /ECONNREFUSED/)
})

t.test('response bodies are capped', async (t) => {
  const rx = await receiver(t, (_req, res) => {
    res.writeHead(200)
    res.end('x'.repeat(1024 * 1024))
  })
  const result = await postJson(`http://127.0.0.1:${rx.port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: true })
  t.equal(result.status, 200)
  t.equal(result.body.length, DEFAULT_MAX_BODY_BYTES)
  const small = await postJson(`http://127.0.0.1:${rx.port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: true, maxBodyBytes: 10 })
  t.equal(small.body, 'xxxxxxxxxx')
})

t.test('consecutive posts to one receiver reuse a keep-alive socket', async (t) => {
  const rx = await receiver(t, ok)
  for (let i = 0; i < 20; i++) {
    const result = await postJson(`http://127.0.0.1:${rx.port}/`, `{"i":${i}}`, {}, { timeoutMs: 2000, allowPrivate: true })
    t.equal(result.status, 200)
  }
  t.equal(rx.seen.length, 20)
  t.equal(rx.connections(), 1)
})

t.test('a pooled socket reset by the receiver is retried once on a fresh one', async (t) => {
  // Connection 1 answers one request then resets on the next, as a receiver closing an idle
  // keep-alive socket does; connection 2 answers normally.
  let connections = 0
  let requests = 0
  const server = net.createServer((socket) => {
    const connection = ++connections
    let served = 0
    socket.on('data', () => {
      requests++
      if (connection === 1 && served === 1) {
        socket.resetAndDestroy()
        return
      }
      served++
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    server.close()
    closeIdleConnections()
  })
  const port = (server.address() as AddressInfo).port
  const first = await postJson(`http://127.0.0.1:${port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: true })
  t.equal(first.status, 200)
  const second = await postJson(`http://127.0.0.1:${port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: true })
  t.equal(second.status, 200, `second post succeeded (${second.error ?? 'no error'})`)
  t.equal(second.body, 'ok')
  t.equal(connections, 2)
  t.equal(requests, 3)
})

t.test('with several validated addresses the socket falls back among them only', async (t) => {
  const rx = await receiver(t, ok)
  // ::1 has no listener here (the receiver binds 127.0.0.1), so success means the second
  // validated address was tried, as happy-eyeballs does with a real resolver.
  const lookup: HostLookup = async () => ['::1', '127.0.0.1']
  const result = await postJson(`http://dual.test:${rx.port}/`, '{}', {}, { timeoutMs: 2000, allowPrivate: true, lookup })
  t.equal(result.status, 200, result.error ?? 'ok')
  t.equal(rx.seen.length, 1)
})
