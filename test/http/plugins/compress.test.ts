import t from 'tap'
import http from 'node:http'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { build } from '../../helpers/build.js'
import { listen, progressWorld } from '../../routes/progress/fixtures.js'

t.test('responses are compressed as the client asks; event streams are not', async (t) => {
  const h = await build(t)
  const get = (url: string, encoding?: string) => h.app.inject({ method: 'GET', url, headers: encoding ? { 'accept-encoding': encoding } : {} })

  t.test('/openapi.json: brotli or gzip when asked, as it is when not', async (t) => {
    const plain = await get('/openapi.json')
    t.equal(plain.headers['content-encoding'], undefined)
    const document = plain.rawPayload
    t.ok(document.length > 100_000, `the document is large (${document.length} bytes)`)
    const br = await get('/openapi.json', 'br, gzip')
    t.equal(br.headers['content-encoding'], 'br', 'brotli preferred')
    t.ok(br.rawPayload.length < document.length / 5, `brotli: ${br.rawPayload.length} bytes`)
    t.same(JSON.parse(brotliDecompressSync(br.rawPayload).toString()), JSON.parse(document.toString()))
    const gz = await get('/openapi.json', 'gzip')
    t.equal(gz.headers['content-encoding'], 'gzip')
    t.same(JSON.parse(gunzipSync(gz.rawPayload).toString()), JSON.parse(document.toString()))
    t.match(gz.headers.vary, /accept-encoding/i)
  })

  t.test('the /docs page and its 4 MB script (served by their own Fastify instance) are compressed too', async (t) => {
    const page = await get('/docs/', 'gzip')
    t.equal(page.statusCode, 200)
    t.equal(page.headers['content-encoding'], 'gzip')
    const script = /<script src="([^"]+)"/.exec(gunzipSync(page.rawPayload).toString())?.[1]
    t.ok(script, 'the page names its script')
    const js = await get(new URL(script!, 'http://x/docs/').pathname, 'gzip')
    t.equal(js.statusCode, 200)
    t.equal(js.headers['content-encoding'], 'gzip')
    const unpacked = gunzipSync(js.rawPayload)
    t.ok(unpacked.length > 4_000_000, `script: ${unpacked.length} bytes`)
    t.ok(js.rawPayload.length < unpacked.length / 3, `sent: ${js.rawPayload.length} bytes`)
  })

  t.test('a small answer is sent as it is (below 1 KiB compression costs more than it saves)', async (t) => {
    const res = await get('/health', 'gzip')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-encoding'], undefined)
    t.same(res.json(), { status: 'ok' })
  })

  t.test('a route\'s progress stream, asked with gzip, comes uncompressed and frame by frame', async (t) => {
    const base = await listen(h.app)
    const w = await progressWorld(h)
    const id = await w.route({ tasks: await w.tasks(1), publish: true })
    // The raw bytes as they arrive: the first frame must come while the stream stays open.
    const { headers, first } = await new Promise<{ headers: http.IncomingHttpHeaders; first: string }>((resolve, reject) => {
      const req = http.get(`${base}/api/v1/routes/${id}/progress/stream`, {
        headers: { authorization: `Bearer ${w.carrier.token}`, accept: 'text/event-stream', 'accept-encoding': 'gzip, br' },
      }, (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1')
          if (text.includes('event: snapshot')) { resolve({ headers: res.headers, first: text }); req.destroy() }
        })
      })
      req.on('error', (err) => { if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err) })
      setTimeout(() => reject(new Error('no snapshot frame within 10 s')), 10_000).unref()
    })
    t.match(headers['content-type'], /^text\/event-stream/)
    t.equal(headers['content-encoding'], undefined, 'not compressed')
    t.match(first, /^retry: 2000\n\n/, 'plain text on the wire')
  })
})
