// The drain of a closing server (issue 33 point 4; what SIGTERM runs in src/main.ts): every open
// event stream ends with a `retry:` hint, a request that reaches an already-open socket is served
// (with Connection: close) rather than answered 503, a stream asked for during the drain ends at
// once with its hint, and the close completes in well under the keep-alive timeout. Over real
// sockets. The processes' side (exit, leases, a rolling restart under load): test/outages/rolling-restart.test.ts.
import net from 'node:net'
import t from 'tap'
import { build } from '../helpers/build.js'
import { listen, openSse, progressWorld } from '../routes/progress/fixtures.js'
import { DRAIN_RETRY_MS, drainRetryFrame } from '../../src/http/stream-drain.js'

/** A socket that has sent the start of a request (so it is not idle) and sends the rest on `finish`. */
function halfSent(port: number, head: string) {
  const socket = net.connect(port, '127.0.0.1')
  let answer = ''
  socket.setEncoding('utf8')
  socket.on('data', (c: string) => { answer += c })
  const closed = new Promise<void>((ok) => socket.on('close', () => ok()))
  socket.on('error', (e) => { answer += `[${e.message}]` })
  const sent = new Promise<void>((ok) => socket.on('connect', () => socket.write(head, () => ok())))
  return {
    sent,
    /** Sends the blank line that ends the headers; resolves with everything the server sent once it closed the socket. */
    async finish(): Promise<string> {
      socket.write('\r\n')
      await closed
      return answer
    },
  }
}

const connections = (server: net.Server) => new Promise<number>((ok, fail) => server.getConnections((err, n) => (err ? fail(err) : ok(n))))
const until = async (check: () => Promise<boolean>) => { while (!(await check())) await new Promise((r) => setTimeout(r, 10)) }

t.test('retry hints stay within their window', async (t) => {
  t.equal(drainRetryFrame(() => 0), `retry: ${DRAIN_RETRY_MS.min}\n\n`)
  t.equal(drainRetryFrame(() => 0.9999), `retry: ${DRAIN_RETRY_MS.min + DRAIN_RETRY_MS.spread - 1}\n\n`)
})

t.test('closing: 20 streams end with a retry hint, late requests on open sockets are served with Connection: close', async (t) => {
  const h = await build(t, { sseHeartbeatMs: 60_000 })
  const base = await listen(h.app)
  const port = Number(new URL(base).port)
  const w = await progressWorld(h)
  const id = await w.route({ tasks: [], publish: true })
  const path = `/api/v1/routes/${id}/progress/stream`
  const auth = { authorization: `Bearer ${w.carrier.token}` }
  const streams = await Promise.all(Array.from({ length: 20 }, () => openSse(`${base}${path}`, auth)))
  await Promise.all(streams.map((s) => s.until((e) => e.some((x) => x.event === 'snapshot'))))
  // Two requests whose sockets are open and whose headers are on their way when the close begins.
  const late = halfSent(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n`)
  const lateStream = halfSent(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: ${auth.authorization}\r\n`)
  await Promise.all([late.sent, lateStream.sent])
  // Accepted and read by the server (a connection still in the listener's backlog is reset when it closes).
  await until(async () => (await connections(h.app.server)) >= 22)
  await new Promise((r) => setTimeout(r, 100))

  const at = Date.now()
  const closed = h.app.close()
  await Promise.all(streams.map((s) => s.ended))
  t.equal(streams.filter((s) => /\n\nretry: \d+\n\n$/.test(s.body)).length, 20, 'all 20 ended by the server, a retry: line last')

  const health = await late.finish()
  t.match(health, /^HTTP\/1\.1 200 /, 'a request arriving while the server drains is served, not answered 503')
  t.match(health, /\r\nconnection: close\r\n/i, '… and its socket is closed after it')
  const stream = await lateStream.finish()
  t.match(stream, /^HTTP\/1\.1 200 /)
  t.match(stream, /content-type: text\/event-stream/)
  t.match(stream, /\r\n\r\nd\r\nretry: 2000\n\n\r\n[\da-f]+\r\nretry: \d+\n\n\r\n0\r\n\r\n$/, 'a stream asked for during the drain ends at once with its retry hint')

  await closed
  const ms = Date.now() - at
  t.ok(ms < 2000, `closed ${ms} ms after the call`)
})
