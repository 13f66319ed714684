import t from 'tap'
import { build } from '../helpers/build.js'
import { createShipment } from '../notifications/fixtures/shipments.js'
import { multipart } from './fixtures/multipart.js'

const PDF = Buffer.from('%PDF-1.4 fake label')

t.test('carrier API over shipments', async (t) => {
  const h = await build(t)
  const org = await h.createOrganization({ roles: ['carrier'], carriers_enabled: true })
  const mk = async (name: string) => (await h.call('POST', '/api/v1/carriers', { token: org.token, body: { name, integration: 'custom', visibility: 'private' } })).json()
  const a = await mk('A')
  const b = await mk('B')
  const get = (key: string, url: string) => h.call('GET', `/carrier/v1${url}`, { token: key })
  const upload = (key: string, id: number, files: Record<string, Buffer | string>) => {
    const m = multipart(files)
    return h.app.inject({ method: 'POST', url: `/carrier/v1/shipments/${id}/documents`, headers: { authorization: `Bearer ${key}`, ...m.headers }, payload: m.payload })
  }
  const status = (key: string, id: number, body: Record<string, unknown>) => h.call('POST', `/carrier/v1/shipments/${id}/status`, { token: key, body })

  const s1 = await createShipment(h.platform, { id: a.carrier.id, integration: 'custom' })
  const s2 = await createShipment(h.platform, { id: a.carrier.id, integration: 'custom' })
  const s3 = await createShipment(h.platform, { id: a.carrier.id, integration: 'custom' })
  const sb = await createShipment(h.platform, { id: b.carrier.id, integration: 'custom' })

  t.test('auth: wrong key and organization token are 401; another carrier\'s shipment is 404', async (t) => {
    t.equal((await get('ck_nope', '/shipments')).statusCode, 401)
    t.equal((await get(org.token, '/shipments')).statusCode, 401)
    t.equal((await get(b.api_key, `/shipments/${s1}`)).statusCode, 404)
    t.equal((await status(b.api_key, s1, { status: 'received' })).statusCode, 404)
    t.equal((await upload(b.api_key, s1, { label: PDF })).statusCode, 404)
    t.equal((await h.call('PUT', `/carrier/v1/shipments/${s1}/tracking`, { token: b.api_key, body: { tracking_number: 'X' } })).statusCode, 404)
    t.equal((await get(a.api_key, '/shipments/999999999')).statusCode, 404)
  })

  t.test('detail: the shipment at root with custom_data and the carrier-side state', async (t) => {
    const res = await get(a.api_key, `/shipments/${s1}`)
    t.equal(res.statusCode, 200, res.body)
    const s = res.json()
    t.equal(s.id, s1)
    t.ok(s.origin && s.destination && Array.isArray(s.packages))
    t.same(s.custom_data, {})
    t.equal(s.carrier_state, 'processing')
    t.same([s.status.code, s.status.substatus?.code], ['pending', 'processing'])
  })

  t.test('change feed: own shipments only, pages by cursor, a changed one comes again, unchanged never twice', async (t) => {
    const p1 = (await get(a.api_key, '/shipments?limit=2')).json()
    t.same(p1.data.map((s: any) => s.id), [s1, s2])
    t.type(p1.meta.next_cursor, 'string')
    // s1 changes while the client pages.
    t.equal((await h.call('PUT', `/carrier/v1/shipments/${s1}/tracking`, { token: a.api_key, body: { tracking_number: 'TRK-1', tracking_url: 'https://track.example/TRK-1' } })).statusCode, 200)
    const p2 = (await get(a.api_key, `/shipments?limit=2&cursor=${p1.meta.next_cursor}`)).json()
    t.same(p2.data.map((s: any) => s.id), [s3, s1], 's1 is listed again after its change')
    t.equal(p2.data[1].tracking_number, 'TRK-1', 'with its new state')
    const p3 = (await get(a.api_key, `/shipments?limit=2&cursor=${p2.meta.next_cursor}`)).json()
    t.same(p3.data, [], 'caught up')
    t.equal(p3.meta.next_cursor, p2.meta.next_cursor, 'the cursor is kept to poll again')
    t.same((await get(b.api_key, '/shipments')).json().data.map((s: any) => s.id), [sb])
    t.same((await get(a.api_key, '/shipments?updated_since=2999-01-01T00:00:00Z')).json().data, [])
    t.equal((await get(a.api_key, '/shipments?updated_since=2000-01-01T00:00:00Z')).json().data.length, 3)
    t.equal((await get(a.api_key, '/shipments?cursor=garbage')).statusCode, 422)
    t.equal((await get(a.api_key, '/shipments?limit=101')).statusCode, 422)
    t.equal((await get(a.api_key, '/shipments?updated_since=yesterday')).statusCode, 422)
  })

  t.test('documents: bad multipart bodies', async (t) => {
    const json = await h.call('POST', `/carrier/v1/shipments/${s1}/documents`, { token: a.api_key, body: { label: 'x' } })
    t.equal(json.statusCode, 422, 'not multipart')
    const noLabel = await upload(a.api_key, s1, { waybill: PDF })
    t.equal(noLabel.statusCode, 422)
    t.ok(noLabel.json().errors.label)
    const empty = await upload(a.api_key, s1, { label: Buffer.alloc(0), label_zpl: Buffer.alloc(0) })
    t.equal(empty.statusCode, 422)
    t.ok(empty.json().errors.label)
    t.ok(empty.json().errors.label_zpl)
    const unknown = await upload(a.api_key, s1, { label: PDF, photo: PDF })
    t.equal(unknown.statusCode, 422)
    t.ok(unknown.json().errors.photo)
    const big = await upload(a.api_key, s1, { label: Buffer.alloc(10 * 1024 * 1024 + 1, 1) })
    t.equal(big.statusCode, 413)
    t.equal((await get(a.api_key, `/shipments/${s1}`)).json().carrier_state, 'processing', 'nothing changed')
  })

  t.test('status rules', async (t) => {
    const before = await status(a.api_key, s1, { status: 'received' })
    t.equal(before.statusCode, 409, 'not documented yet')
    t.equal(before.json().code, 'shipment_not_documented')
    const up = await upload(a.api_key, s1, { label: PDF, label_zpl: '^XA^XZ', waybill: PDF })
    t.equal(up.statusCode, 200, up.body)
    t.equal(up.json().success, true)
    t.equal(up.json().shipment.carrier_state, 'pending_preparation')
    t.same([up.json().shipment.status.code, up.json().shipment.status.substatus?.code], ['pending', 'pending_preparation'])

    const bad = await status(a.api_key, s1, { status: 'teleported', message: 'x'.repeat(151), occurred_at: '2000-01-01T00:00:00Z' })
    t.equal(bad.statusCode, 422)
    for (const k of ['status', 'message', 'occurred_at']) t.ok(bad.json().errors[k], k)
    t.ok((await status(a.api_key, s1, { status: 'failed_delivery' })).json().errors.reason, 'failed_delivery needs a reason')
    t.ok((await status(a.api_key, s1, { status: 'failed_delivery', reason: 'aliens' })).json().errors.reason)
    t.ok((await status(a.api_key, s1, { status: 'not_delivered', reason: 'stolen' })).json().errors.reason, 'not_delivered needs lost')
    t.equal((await status(a.api_key, s1, { status: 'received', extra: 1 })).statusCode, 422)

    const steps: [Record<string, unknown>, string, string | null][] = [
      [{ status: 'received', message: 'At the hub' }, 'picked_up', null],
      [{ status: 'out_for_delivery' }, 'out_for_delivery', null],
      [{ status: 'failed_delivery', reason: 'receiver_absent' }, 'attempted_delivery', 'receiver_absent'],
      [{ status: 'soon_deliver' }, 'out_for_delivery', 'soon_deliver'],
      [{ status: 'delivered' }, 'delivered', null],
    ]
    for (const [body, code, sub] of steps) {
      const res = await status(a.api_key, s1, body)
      t.equal(res.statusCode, 200, `${body.status}: ${res.body}`)
      t.same([res.json().shipment.status.code, res.json().shipment.status.substatus?.code ?? null], [code, sub], `${body.status} → ${code}`)
    }
    const again = await status(a.api_key, s1, { status: 'returned' })
    t.equal(again.statusCode, 409, 'a final status cannot change')
    const history = (await h.platform.store.readStream(`shipment-${s1}`)).filter((e) => e.type === 'StatusReported')
    t.equal(history.length, 5, 'every report is in the history')
    t.equal((history[0]!.data as any).message, 'At the hub')
  })

  t.test('return flow: after rejected, delivered is refused; returned is final', async (t) => {
    await upload(a.api_key, s2, { label: PDF })
    t.equal((await status(a.api_key, s2, { status: 'failed_delivery', reason: 'rejected' })).statusCode, 200)
    const delivered = await status(a.api_key, s2, { status: 'delivered' })
    t.equal(delivered.statusCode, 409)
    t.equal(delivered.json().code, 'shipment_in_return')
    const ret = await status(a.api_key, s2, { status: 'returned' })
    t.equal(ret.statusCode, 200)
    t.equal(ret.json().shipment.status.code, 'returned')
    t.equal((await status(a.api_key, s2, { status: 'received' })).statusCode, 409)
  })

  t.test('not_delivered with lost is final; occurred_at defaults to now and may be given', async (t) => {
    await upload(a.api_key, s3, { label: PDF })
    const createdAt = (await get(a.api_key, `/shipments/${s3}`)).json().created_at
    const at = new Date(Date.parse(createdAt) + 1).toISOString()
    const rec = await status(a.api_key, s3, { status: 'received', occurred_at: at })
    t.equal(rec.statusCode, 200, rec.body)
    const lost = await status(a.api_key, s3, { status: 'not_delivered', reason: 'lost' })
    t.equal(lost.statusCode, 200)
    t.same([lost.json().shipment.status.code, lost.json().shipment.status.substatus?.code], ['not_delivered', 'lost'])
    t.equal((await status(a.api_key, s3, { status: 'delivered' })).statusCode, 409)
    const events = (await h.platform.store.readStream(`shipment-${s3}`)).filter((e) => e.type === 'StatusReported')
    t.equal((events[0]!.data as any).occurred_at, at)
  })

  t.test('tracking: validation', async (t) => {
    const res = await h.call('PUT', `/carrier/v1/shipments/${s1}/tracking`, { token: a.api_key, body: { tracking_url: 'not a url' } })
    t.equal(res.statusCode, 422)
    t.ok(res.json().errors.tracking_number)
    t.ok(res.json().errors.tracking_url)
  })
})

