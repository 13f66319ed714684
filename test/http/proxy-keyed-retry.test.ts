// The shipped nginx (infra/proxy/nginx.conf) sends a request with an Idempotency-Key to the next
// process when the one it chose closed the connection without an answer (a stopping process in a
// rolling restart, issue 33): the client gets the answer, not nginx's 502. A POST without a key is
// not sent twice (it may have been processed): the client still gets the 502. Upstreams here are
// two listening sockets of the test's own: one drops every connection unanswered, the other answers.
import t from 'tap'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { startNginx } from '../helpers/nginx.js'

const listen = async (server: net.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return (server.address() as AddressInfo).port
}

t.test('a keyed POST whose connection dropped is sent to the next process; an unkeyed one is not', async (t) => {
  let dropped = 0
  const dropping = net.createServer((socket) => { socket.once('data', () => { dropped++; socket.destroy() }) })
  const answered: string[] = []
  const answering = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => { body += String(c) })
    req.on('end', () => {
      answered.push(`${req.method} ${req.headers['idempotency-key'] ?? '-'} ${body}`)
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, key: req.headers['idempotency-key'] ?? null, body }))
    })
  })
  const ports = [await listen(dropping), await listen(answering)]
  t.teardown(() => { dropping.close(); answering.close() })
  // The shipped upstream parameters take a process out for 5 s after 2 failures: each half of the
  // test has a proxy of its own, so that both find the dropping process in the rotation.
  const [keyedProxy, unkeyedProxy] = [await startNginx(t, ports), await startNginx(t, ports)]
  const post = (i: number, key?: string) => fetch(`http://127.0.0.1:${(key ? keyedProxy : unkeyedProxy).port}/api/v1/shipments?n=${i}`, {
    method: 'POST', body: JSON.stringify({ n: i }),
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
  }).then(async (r) => ({ status: r.status, body: await r.text() }))

  const keyed: { status: number; body: string }[] = []
  for (let i = 0; i < 8; i++) keyed.push(await post(i, `key-${i}`))
  t.ok(dropped > 0, `some keyed POSTs were sent first to the process that dropped them (${dropped})`)
  t.same(keyed.map((r) => r.status), keyed.map(() => 201), 'every keyed POST got the answer')
  for (const [i, r] of keyed.entries()) t.same(JSON.parse(r.body), { ok: true, key: `key-${i}`, body: JSON.stringify({ n: i }) }, `POST ${i} arrived whole, with its key and body`)

  const before = dropped
  const unkeyed: number[] = []
  for (let i = 0; i < 8; i++) unkeyed.push((await post(100 + i)).status)
  const droppedUnkeyed = dropped - before
  t.ok(droppedUnkeyed > 0, `some unkeyed POSTs went to the dropping process (${droppedUnkeyed})`)
  t.equal(unkeyed.filter((s) => s === 502).length, droppedUnkeyed, 'each of those is the proxy\'s 502: not sent again')
  t.equal(answered.filter((a) => a.startsWith('POST - ')).length, 8 - droppedUnkeyed, 'the others were answered once each')
})
