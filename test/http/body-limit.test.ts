import t from 'tap'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers/build.js'
import { DRAIN_MAX_BYTES } from '../../src/http/refused-body.js'

const BODY_BYTES = 20 * 1024 * 1024
const CHUNK = Buffer.alloc(64 * 1024, 'x')

interface Outcome { status?: number; body: string; headers: Record<string, unknown>; error?: NodeJS.ErrnoException }

/**
 * POSTs BODY_BYTES of JSON in 64 KB chunks, yielding to the event loop between chunks so the
 * client is still sending when the server has answered, as a client on a real network would be.
 * Resolves once the upload ended and the response was read, or on the first socket error.
 */
function postHuge(port: number, token: string, declareLength: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { body: '', headers: {} }
    let sent = false
    let read = false
    const finish = () => { if (sent && read) resolve(out) }
    const req = request({
      host: '127.0.0.1', port, method: 'POST', path: '/api/v1/shipments', agent: false,
      headers: {
        authorization: `Bearer ${token}`, 'content-type': 'application/json',
        ...(declareLength ? { 'content-length': String(BODY_BYTES) } : {}),
      },
    }, (res) => {
      out.status = res.statusCode
      out.headers = res.headers
      res.setEncoding('utf8')
      res.on('data', (c) => { out.body += c })
      res.on('end', () => { read = true; finish() })
    })
    req.on('error', (error) => { out.error = error; resolve(out) })

    // '{"name":"xxx…x"}' padded to exactly BODY_BYTES.
    const head = Buffer.from('{"name":"')
    const tail = Buffer.from('"}')
    let remaining = BODY_BYTES - head.length - tail.length
    req.write(head)
    const pump = () => {
      if (out.error) return
      if (remaining <= 0) { req.end(tail, () => { sent = true; finish() }); return }
      const n = Math.min(remaining, CHUNK.length)
      remaining -= n
      const more = req.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))
      if (more) setImmediate(pump)
      else req.once('drain', pump)
    }
    pump()
  })
}

t.test('bodies over the limit on a listening server', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization()
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const port = (h.app.server.address() as AddressInfo).port

  t.test('the client may finish sending and always reads the 413', async (t) => {
    for (const declareLength of [false, true]) {
      for (let i = 0; i < 4; i++) {
        const r = await postHuge(port, org.token, declareLength)
        const label = `${declareLength ? 'content-length' : 'chunked'} try ${i + 1}`
        t.notOk(r.error, `${label}: no socket error (${r.error?.code ?? 'none'})`)
        t.equal(r.status, 413, `${label}: 413`)
        t.same(r.body ? JSON.parse(r.body).code : undefined, 'payload_too_large', `${label}: the JSON error body is read`)
      }
    }
  })

  t.test('a body declared over the drain bound is refused at once, without reading it', async (t) => {
    const r = await new Promise<Outcome>((resolve) => {
      const req = request({
        host: '127.0.0.1', port, method: 'POST', path: '/api/v1/shipments', agent: false,
        headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json', 'content-length': String(DRAIN_MAX_BYTES + 1) },
      }, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => { body += c })
        res.on('end', () => { resolve({ status: res.statusCode, body, headers: res.headers }); req.destroy() })
      })
      req.on('error', () => undefined)
      req.write('{"name":"')
    })
    t.equal(r.status, 413, 'answered before the body is sent')
    t.equal(r.headers.connection, 'close')
    t.equal(JSON.parse(r.body).code, 'payload_too_large')
  })
})
