import t from 'tap'
import { build } from '../helpers/build.js'
import { handleCommand } from '../../src/shared/command-handler.js'
import { shipmentStream } from '../../src/shipments/shipment.js'
import { shipmentDecider, type ShipmentCommand } from './fixtures/shipment-commands.js'

const address = { name: 'Ana', street: 'Av. Colón', street_number: '1234', city: 'Córdoba', state: 'Córdoba', country: 'AR' }

t.test('projection: carrier-side flow, history, change feed', async (t) => {
  const h = await build(t)
  const carrier = await h.createOrganization({ roles: ['carrier'] })
  const shipper = await h.createOrganization({ roles: ['shipper'] })
  await h.signContract(carrier.id, shipper.id)
  const create = async () => {
    const res = await h.call('POST', '/api/v1/shipments', {
      token: shipper.token,
      body: { carrier_id: carrier.id, origin: address, destination: address, packages: [{ grams: 100, length: 1, width: 2, height: 3 }] },
    })
    t.equal(res.statusCode, 201, res.body)
    return res.json().shipment.id as number
  }
  const a = await create()
  const b = await create()
  const ctx = { now: new Date(), actor: { kind: 'carrier' as const, id: 'car_test' } }
  const run = (id: number, command: ShipmentCommand) => handleCommand(h.platform.commands, shipmentStream(id), shipmentDecider, command, { ...ctx, now: new Date() })
  const seqOf = async (id: number) => Number((await h.platform.rm.selectFrom('shipments').select('change_seq').where('id', '=', id).executeTakeFirstOrThrow()).change_seq)

  const s0 = [await seqOf(a), await seqOf(b)]
  t.ok(s0[1]! > s0[0]!, 'later rows get higher sequences')
  await run(a, { type: 'SetTracking', data: { tracking_number: 'TRK-1', set_at: new Date().toISOString() } })
  const s1 = await seqOf(a)
  t.ok(s1 > s0[1]!, 'a changed row moves to the end of the feed')
  t.equal(await seqOf(b), s0[1], 'an unchanged row keeps its sequence')
  const get = async () => (await h.call('GET', `/api/v1/shipments/${a}`, { token: shipper.token })).json()
  t.equal((await get()).status.code, 'pending')
  t.equal((await get()).status.code, 'pending', 'served from the view cache')
  await run(a, { type: 'ReportCarrierStatus', data: { status: 'received', reported_at: new Date().toISOString() } })
  t.equal((await get()).status.code, 'picked_up', 'a write invalidates the cached view at once')
  await run(a, { type: 'ReportCarrierStatus', data: { status: 'failed_delivery', reason: 'rejected', message: 'nobody wants it', reported_at: new Date().toISOString() } })
  await run(a, { type: 'ReportCarrierStatus', data: { status: 'returned', reported_at: new Date().toISOString() } })
  const row = await h.platform.rm.selectFrom('shipments').selectAll().where('id', '=', a).executeTakeFirstOrThrow()
  t.equal(row.status, 'returned')
  t.equal(row.final_status, 'returned')
  t.equal(row.tracking_number, 'TRK-1')
  t.ok(row.in_return)
  t.ok(row.shipped_at && row.finished_at)
  t.ok(Number(row.change_seq) > s1)
  const tracking = (await h.call('GET', `/api/v1/shipments/${a}/tracking`, { token: shipper.token })).json()
  t.equal(tracking.tracking_number, 'TRK-1')
  t.same(tracking.tracking.map((i: any) => [i.status.code, i.substatus?.code ?? null, i.source]), [
    ['pending', 'pending_preparation', 'routes_api'],
    ['picked_up', null, 'carrier_api'],
    ['attempted_delivery', 'rejected', 'carrier_api'],
    ['returned', null, 'carrier_api'],
  ])
  t.equal(tracking.tracking[2].message, 'nobody wants it')
  const cancel = await h.call('POST', `/api/v1/shipments/${a}/cancel`, { token: shipper.token })
  t.equal(cancel.statusCode, 409, 'a final shipment cannot be cancelled')
  const inHands = await create()
  await run(inHands, { type: 'ReportCarrierStatus', data: { status: 'received', reported_at: new Date().toISOString() } })
  const late = await h.call('POST', `/api/v1/shipments/${inHands}/cancel`, { token: shipper.token })
  t.equal(late.statusCode, 409)
  t.equal(late.json().code, 'shipment_in_transit')
})
