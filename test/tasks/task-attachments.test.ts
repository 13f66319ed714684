import t from 'tap'
import { build } from '../helpers/build.js'
import { PDF, PNG, multipart, tasksWorld, upload } from './fixtures.js'

t.test('task attachments: proof of delivery through the blob port', async (t) => {
  const h = await build(t)
  const w = await tasksWorld(h)
  const { carrier } = w
  const task = await w.task({ assignee_id: w.driver.id, requirements: { complete: ['photo'] } })

  t.test('a photo and a PDF are stored, listed and downloadable', async (t) => {
    const png = await upload(h, task.ulid, w.driver.token, PNG, 'door.png', 'image/png')
    t.equal(png.statusCode, 201, png.body)
    const { attachment } = png.json()
    t.match(attachment, { filename: 'door.png', content_type: 'image/png', size: PNG.length, url: `/api/v1/tasks/${task.ulid}/attachments/${attachment.id}`, uploaded_by: w.driver.id })
    t.match(attachment.id, /^att_/)
    const pdf = await upload(h, task.ulid, carrier.token, PDF, 'receipt.pdf', 'application/pdf')
    t.equal(pdf.statusCode, 201, pdf.body)
    const list = await h.call('GET', `/api/v1/tasks/${task.ulid}/attachments`, { token: carrier.token })
    t.equal(list.statusCode, 200)
    t.same(list.json().attachments.map((a: any) => a.filename), ['door.png', 'receipt.pdf'])
    const dl = await h.app.inject({ method: 'GET', url: attachment.url, headers: { authorization: `Bearer ${w.driver.token}` } })
    t.equal(dl.statusCode, 200)
    t.equal(dl.headers['content-type'], 'image/png')
    t.match(String(dl.headers['content-disposition']), /^attachment/)
    t.ok(dl.rawPayload.equals(PNG), 'the same bytes')
    const shown = (await h.call('GET', `/api/v1/tasks/${task.ulid}`, { token: carrier.token })).json()
    t.equal(shown.attachments.length, 2, 'the task object lists them')
    const events = (await h.call('GET', `/api/v1/tasks/${task.ulid}/events`, { token: carrier.token })).json().events
    t.match(events.at(-1), { type: 'TaskAttachmentAdded', data: { ulid: task.ulid, organization_id: carrier.id, content_type: 'application/pdf' }, metadata: { actor: { kind: 'organization' } } })
    const done = await w.transition(task.ulid, 'complete', { attachment_ids: [attachment.id] }, w.driver.token)
    t.equal(done.statusCode, 200, `the photo meets the requirement: ${done.body}`)
  })

  t.test('the same size and type checks as shipment attachments, plus image or PDF only', async (t) => {
    const other = await w.task()
    const cases: [string, Buffer, string, string, number, string][] = [
      ['text file', Buffer.from('hello'), 'a.txt', 'text/plain', 422, 'file'],
      ['empty file', Buffer.alloc(0), 'a.png', 'image/png', 422, 'file'],
      ['a PDF that is not one', Buffer.from('<html>'), 'a.pdf', 'application/pdf', 422, 'file'],
      ['a PNG that is not one', Buffer.from('GIF89a'), 'a.png', 'image/png', 422, 'file'],
      ['over 10 MB', Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024)]), 'big.pdf', 'application/pdf', 413, ''],
    ]
    for (const [name, data, filename, type, status, field] of cases) {
      const res = await upload(h, other.ulid, carrier.token, data, filename, type)
      t.equal(res.statusCode, status, `${name}: ${res.body}`)
      if (field) t.ok(res.json().errors[field], `${name} names ${field}`)
    }
    const exactly = await upload(h, other.ulid, carrier.token, Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024 - PDF.length)]), 'max.pdf', 'application/pdf')
    t.equal(exactly.statusCode, 201, 'exactly 10 MB is fine')
    const { payload } = multipart(PNG, 'a.png', 'image/png')
    const noFile = await h.app.inject({ method: 'POST', url: `/api/v1/tasks/${other.ulid}/attachments`, payload: { x: 1 }, headers: { authorization: `Bearer ${carrier.token}` } })
    t.ok([415, 422].includes(noFile.statusCode), `JSON instead of multipart is refused: ${noFile.statusCode}`)
    t.ok(payload.length > 0)
    t.equal((await h.call('GET', `/api/v1/tasks/${other.ulid}/attachments`, { token: carrier.token })).json().attachments.length, 1, 'only the valid one was stored')
  })

  t.test('another organization, and a driver on a task not its own, get 404', async (t) => {
    const stranger = await h.createOrganization({ roles: ['carrier'] })
    const notMine = await w.task()
    t.equal((await upload(h, task.ulid, stranger.token, PNG, 'a.png', 'image/png')).statusCode, 404)
    t.equal((await h.call('GET', `/api/v1/tasks/${task.ulid}/attachments`, { token: stranger.token })).statusCode, 404)
    t.equal((await upload(h, notMine.ulid, w.driver.token, PNG, 'a.png', 'image/png')).statusCode, 404)
    const first = (await h.call('GET', `/api/v1/tasks/${task.ulid}/attachments`, { token: carrier.token })).json().attachments[0]
    t.equal((await h.app.inject({ method: 'GET', url: first.url, headers: { authorization: `Bearer ${stranger.token}` } })).statusCode, 404)
    t.equal((await h.app.inject({ method: 'GET', url: `/api/v1/tasks/${task.ulid}/attachments/att_nope`, headers: { authorization: `Bearer ${carrier.token}` } })).statusCode, 404)
  })
})
