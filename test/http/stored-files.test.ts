import t from 'tap'
import { build } from '../helpers/build.js'
import { closing, part, uploadRoutes } from '../shipments/fixtures/upload-routes.js'
import { contentDisposition, pdfContentType } from '../../src/http/stored-file.js'

const HTML = Buffer.from('<html><script>alert(document.cookie)</script></html>')
const PDF = Buffer.from('%PDF-1.4\n%carrier label\n')

t.test('stored files are served without trusting the uploader\'s type, and every response says nosniff', async (t) => {
  const h = await build(t)
  const u = await uploadRoutes(h)
  const [attachments, documents] = u.routes
  const label = (id: number) => h.app.inject({ method: 'GET', url: `/api/v1/shipments/${id}/label`, headers: { authorization: `Bearer ${u.org.token}` } })
  const uploadLabel = (id: number, bytes: Buffer) =>
    u.post(documents!, id, Buffer.concat([part('x', 'label', bytes, 'label.pdf', 'application/pdf'), closing('x')]), 'multipart/form-data; boundary=x')

  t.test('an HTML file uploaded as the label comes back as opaque bytes to download', async (t) => {
    const id = await u.newShipment()
    t.equal((await uploadLabel(id, HTML)).statusCode, 200)
    const res = await label(id)
    t.equal(res.statusCode, 200)
    t.equal(res.headers['content-type'], 'application/octet-stream')
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.match(String(res.headers['content-disposition']), /^attachment; /)
    t.same(res.rawPayload, HTML, 'the bytes as uploaded')
  })

  t.test('a real PDF label is a PDF, shown inline', async (t) => {
    const id = await u.newShipment()
    t.equal((await uploadLabel(id, PDF)).statusCode, 200)
    const res = await label(id)
    t.equal(res.headers['content-type'], 'application/pdf')
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.match(String(res.headers['content-disposition']), /^inline; filename="label-/)
    t.same(res.rawPayload, PDF)
  })

  t.test('a generated label is a PDF too', async (t) => {
    const res = await label(await u.newShipment())
    t.equal(res.headers['content-type'], 'application/pdf')
    t.equal(res.rawPayload.subarray(0, 5).toString(), '%PDF-')
  })

  t.test('an attachment is always a download, its name safely encoded', async (t) => {
    const id = await u.newShipment()
    // The name 'résumé "final" (1) 100%.html', sent the RFC 5987 way as a quote cannot sit in filename="…".
    const header = `Content-Disposition: form-data; name="file"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22%20(1)%20100%25.html\r\nContent-Type: text/html`
    const up = await u.post(attachments!, id, Buffer.concat([Buffer.from(`--x\r\n${header}\r\n\r\n`), HTML, Buffer.from('\r\n'), closing('x')]), 'multipart/form-data; boundary=x')
    t.equal(up.statusCode, 201, up.body)
    t.equal(up.json().attachment.filename, 'résumé "final" (1) 100%.html')
    const res = await h.call('GET', up.json().attachment.url, { token: u.org.token })
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-content-type-options'], 'nosniff')
    t.equal(res.headers['content-disposition'], `attachment; filename="r_sum_ _final_ (1) 100_.html"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22%20%281%29%20100%25.html`)
    t.same(res.rawPayload, HTML)
  })

  t.test('JSON answers, errors and unknown routes carry nosniff', async (t) => {
    const id = await u.newShipment()
    const responses = [
      await h.call('GET', `/api/v1/shipments/${id}`, { token: u.org.token }),
      await h.call('GET', `/api/v1/shipments/${id}`),
      await h.call('GET', '/api/v1/nowhere', { token: u.org.token }),
      await h.call('POST', '/api/v1/shipments', { token: u.org.token, body: { packages: [] } }),
      await h.call('GET', '/health'),
    ]
    t.same(responses.map((r) => r.statusCode), [200, 401, 404, 422, 200])
    for (const r of responses) t.equal(r.headers['x-content-type-options'], 'nosniff', `${r.statusCode}`)
  })
})

t.test('helpers', async (t) => {
  t.equal(pdfContentType(Buffer.from('%PDF-1.7')), 'application/pdf')
  t.equal(pdfContentType(Buffer.from('%PDF')), 'application/octet-stream', 'too short to be one')
  t.equal(pdfContentType(Buffer.from(' %PDF-1.7')), 'application/octet-stream')
  t.equal(pdfContentType(Buffer.alloc(0)), 'application/octet-stream')
  t.equal(contentDisposition('attachment', 'a\\b\r\n.txt'), `attachment; filename="a_b__.txt"; filename*=UTF-8''a%5Cb%0D%0A.txt`)
  t.equal(contentDisposition('inline', "it's*.pdf"), `inline; filename="it's*.pdf"; filename*=UTF-8''it%27s%2A.pdf`)
})
