import { randomBytes } from 'node:crypto'
import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { startBackground } from '../../src/processes/background.js'
import { silentLogger } from '../../src/infrastructure/bus/bus.js'
import { until } from '../notifications/fixtures/receiver.js'
import { newAddress } from './fixtures.js'

// DESIGN §3.9 / spec item 10: a shipment of a service_routes carrier is run by the platform end to
// end: its workflow starts in the carrier organization, and the tasks' outcomes are the shipment's
// statuses, which the shipper reads as any other (source "routes").

const natsUrl = process.env.NATS_URL
const ADAPTERS = natsUrl ? ['in-process', 'nats'] as const : ['in-process'] as const

for (const adapter of ADAPTERS) {
  t.test(`service_routes shipments run by workflows, on the ${adapter} bus`, async (t) => {
    const h: TestApp = await build(t, { natsUrl: adapter === 'nats' ? natsUrl : undefined })
    const carrier = await h.createOrganization({ roles: ['carrier'], currency: 'ARS' })
    const shipper = await h.createOrganization({ roles: ['shipper'], currency: 'ARS' })
    await h.signContract(carrier.id, shipper.id)
    const suffix = randomBytes(4).toString('hex')
    const bg = await startBackground(h.platform, silentLogger, { nats: { streamName: `SRS_${suffix}`, subjectPrefix: `srs${suffix}` } })
    t.teardown(() => bg.stop())

    const ship = async (extra: Record<string, unknown> = {}) => {
      const res = await h.call('POST', '/api/v1/shipments', {
        token: shipper.token,
        body: { carrier_id: carrier.id, origin: newAddress({ city: 'Córdoba', state: 'Córdoba' }), destination: newAddress(), packages: [{ grams: 1200, length: 10, width: 20, height: 30 }], ...extra },
      })
      if (res.statusCode !== 201) throw new Error(`shipment: ${res.body}`)
      return res.json().shipment as { id: number }
    }
    const workflowOf = async (shipmentId: number, check: (w: any) => boolean, what: string) => {
      let found: any
      await until(async () => {
        const list = (await h.call('GET', `/api/v1/workflows?shipment_id=${shipmentId}`, { token: carrier.token })).json()
        found = list.data?.[0] && (await h.call('GET', `/api/v1/workflows/${list.data[0].id}`, { token: carrier.token })).json()
        return Boolean(found && check(found))
      }, 15_000, what)
      return found
    }
    const shipmentAsShipper = async (id: number) => (await h.call('GET', `/api/v1/shipments/${id}`, { token: shipper.token })).json()
    const trackingOf = async (id: number) => (await h.call('GET', `/api/v1/shipments/${id}/tracking`, { token: shipper.token })).json().tracking as any[]
    const act = (ulid: string, action: string, body?: unknown) => h.call('POST', `/api/v1/tasks/${ulid}/${action}`, { token: carrier.token, ...(body ? { body } : {}) })

    t.test('the delivery workflow starts in the carrier organization; the completed task delivers the shipment', async (t) => {
      const s = await ship()
      const wf = await workflowOf(s.id, (w) => w.tasks.length === 1, 'the delivery workflow and its task')
      t.match(wf, { blueprint: { key: 'delivery', version: 1 }, shipment_id: s.id, status: 'new' })
      const task = (await h.call('GET', `/api/v1/tasks/${wf.tasks[0].ulid}`, { token: carrier.token })).json()
      t.match(task, { type: 'delivery', shipment_id: s.id, address: { city: { name: 'Rosario' } }, load: { grams: 1200, packages: 1 } }, 'the task is at the shipment\'s destination with its load')
      t.equal((await act(task.ulid, 'complete', { signed_by: 'Ana Gómez' })).statusCode, 200)
      await until(async () => (await shipmentAsShipper(s.id)).status?.code === 'delivered', 15_000, 'the shipment delivered')
      const delivered = (await trackingOf(s.id)).find((i) => i.status.code === 'delivered')
      t.match(delivered, { source: 'routes', signed_by: 'Ana Gómez' }, 'the shipper reads it as any other status, from the routes operations')
      await workflowOf(s.id, (w) => w.status === 'completed', 'the workflow completed')
    })

    t.test('a failed delivery: attempted_delivery with the reason, and a retry task', async (t) => {
      const s = await ship()
      const wf = await workflowOf(s.id, (w) => w.tasks.length === 1, 'the workflow')
      t.equal((await act(wf.tasks[0].ulid, 'fail', { reason: 'no_answer' })).statusCode, 200)
      const retried = await workflowOf(s.id, (w) => w.tasks.length === 2, 'the retry task')
      t.match(retried.tasks[1], { step_key: 'delivery', status: 'pending' })
      const shipment = await shipmentAsShipper(s.id)
      t.equal(shipment.status.code, 'attempted_delivery')
      const attempt = (await trackingOf(s.id)).find((i) => i.status.code === 'attempted_delivery')
      t.match(attempt, { source: 'routes', substatus: { code: 'no_answer' } })
    })

    t.test('requires_pickup starts pickup-delivery; the picked-up shipment shows it', async (t) => {
      const s = await ship({ requires_pickup: true })
      const wf = await workflowOf(s.id, (w) => w.tasks.length === 1, 'the pickup task')
      t.match(wf, { blueprint: { key: 'pickup-delivery' } })
      t.match(wf.tasks[0], { step_key: 'pickup', type: 'pickup' })
      t.equal((await act(wf.tasks[0].ulid, 'complete')).statusCode, 200)
      await workflowOf(s.id, (w) => w.tasks.length === 2, 'the delivery task after the pickup')
      t.equal((await shipmentAsShipper(s.id)).status.code, 'picked_up')
    })

    t.test('the shipper cancels the shipment: its workflow and open task are cancelled', async (t) => {
      const s = await ship()
      const wf = await workflowOf(s.id, (w) => w.tasks.length === 1, 'the workflow')
      t.equal((await h.call('POST', `/api/v1/shipments/${s.id}/cancel`, { token: shipper.token })).statusCode, 200)
      // The cancel is recorded first, then each open task is cancelled by its own command: wait for both.
      const cancelled = await workflowOf(s.id, (w) => w.status === 'cancelled' && w.tasks[0]?.status === 'cancelled', 'the workflow and its task cancelled')
      t.equal(cancelled.tasks[0].status, 'cancelled')
    })
  })
}
